// ReplicationCore, the leader's rules: follower fetches, the high
// watermark, ISR shrink and expand through AlterPartition, acks=-1.
// Sources: Kafka core/.../cluster/Partition.scala and Replica.scala
// (REPLICATION.md A2-A9).
#include <algorithm>

#include "base/assert.h"
#include "replication/replication_core.h"

namespace samsa::replication {

// --- Produce ---------------------------------------------------------------

// Partition.appendRecordsToLeader: with acks=-1, refuse before writing
// anything when the (committed) ISR is below min.insync.replicas.
ProduceError ReplicationCore::check_append(int16_t acks) const {
  if (!is_leader()) return ProduceError::kNotLeaderOrFollower;
  if (acks == -1 && int32_t(isr_.isr().size()) < effective_min_isr()) return ProduceError::kNotEnoughReplicas;
  return ProduceError::kNone;
}

void ReplicationCore::on_local_append(Offset new_log_end, int64_t now_ms) {
  ASSERT_MSG(is_leader(), "only a leader appends its own batches");
  ASSERT_MSG(new_log_end >= log_end_, "a leader's log only grows");
  log_end_ = new_log_end;
  // With an ISR of one the HW follows the append at once.
  if (maybe_increment_high_watermark(now_ms)) complete_waiting_produces();
  check_invariants();
}

// Partition.checkEnoughReplicasReachOffset: done once the HW covers the
// batch; then NONE only if the maximal ISR still has min.insync.replicas
// members (else the record is written but under-replicated).
std::optional<ProduceError> ReplicationCore::check_enough_replicas(Offset required_offset) const {
  if (!is_leader()) return ProduceError::kNotLeaderOrFollower;
  if (high_watermark_ < required_offset) return std::nullopt;
  if (effective_min_isr() <= int32_t(isr_.maximal_isr().size())) return ProduceError::kNone;
  return ProduceError::kNotEnoughReplicasAfterAppend;
}

std::optional<ProduceError> ReplicationCore::await_produce(ProduceWaitId id, Offset required_offset) {
  ASSERT_MSG(!waiting_by_id_.contains(id), "a produce wait id is used once");
  std::optional<ProduceError> now = check_enough_replicas(required_offset);
  if (now) return now;
  waiting_.emplace(required_offset, id);
  waiting_by_id_.emplace(id, required_offset);
  return std::nullopt;
}

void ReplicationCore::cancel_produce(ProduceWaitId id) {
  auto it = waiting_by_id_.find(id);
  if (it == waiting_by_id_.end()) return;
  auto [first, last] = waiting_.equal_range(it->second);
  for (auto w = first; w != last; ++w) {
    if (w->second == id) {
      waiting_.erase(w);
      break;
    }
  }
  waiting_by_id_.erase(it);
}

// The purgatory key is the required offset: every wait at or below the HW
// is decided now (DelayedProduce.tryComplete after the HW moved).
void ReplicationCore::complete_waiting_produces() {
  while (!waiting_.empty() && waiting_.begin()->first <= high_watermark_) {
    auto [required, id] = *waiting_.begin();
    std::optional<ProduceError> error = check_enough_replicas(required);
    ASSERT(error.has_value());
    ready_.completed_produces.push_back({id, *error});
    waiting_.erase(waiting_.begin());
    waiting_by_id_.erase(id);
  }
}

void ReplicationCore::fail_waiting_produces(ProduceError error) {
  for (const auto& [required, id] : waiting_) ready_.completed_produces.push_back({id, error});
  waiting_.clear();
  waiting_by_id_.clear();
}

// --- Follower fetch ---------------------------------------------------------

// Partition.fetchRecords for a follower: localLogWithEpochOrThrow
// (checkCurrentLeaderEpoch), then followerReplicaOrThrow.
FetchError ReplicationCore::check_fetch(const FollowerFetch& fetch) const {
  if (!is_leader()) return FetchError::kNotLeaderOrFollower;
  if (fetch.current_leader_epoch) {
    if (*fetch.current_leader_epoch < leader_epoch_) return FetchError::kFencedLeaderEpoch;
    if (*fetch.current_leader_epoch > leader_epoch_) return FetchError::kUnknownLeaderEpoch;
  }
  if (!followers_.contains(fetch.replica)) {
    // Not (yet) a replica here, e.g. a reassignment target we have not
    // heard of: with an epoch the follower retries (KRaft).
    return fetch.current_leader_epoch ? FetchError::kUnknownLeaderEpoch : FetchError::kNotLeaderOrFollower;
  }
  return FetchError::kNone;
}

// Partition.readRecords: the divergence check on LastFetchedEpoch, before
// reading. nullopt and error kNone: no divergence.
std::optional<EpochEndOffset> ReplicationCore::divergence(const FollowerFetch& fetch, Offset log_start,
                                                          const LeaderEpochLookup& local, FetchError& error) const {
  if (!fetch.last_fetched_epoch) return std::nullopt;
  std::optional<EpochEndOffset> end = local.end_offset_for(*fetch.last_fetched_epoch);
  if (!end || end->epoch == kNoLeaderEpoch || end->end_offset == kNoOffset) {
    error = FetchError::kOffsetOutOfRange;  // cannot tell where its epoch ends
    return std::nullopt;
  }
  if (fetch.fetch_offset < log_start) {
    error = FetchError::kOffsetOutOfRange;  // regardless of divergence
    return std::nullopt;
  }
  if (end->epoch < *fetch.last_fetched_epoch || end->end_offset < fetch.fetch_offset) return end;
  return std::nullopt;
}

FetchDecision ReplicationCore::on_follower_fetch(const FollowerFetch& fetch, Offset log_start,
                                                 const LeaderEpochLookup& local, int64_t now_ms) {
  FetchDecision d;
  d.high_watermark = high_watermark_;
  d.log_end_offset = log_end_;
  d.error = check_fetch(fetch);
  if (d.error != FetchError::kNone) return d;
  d.diverging_epoch = divergence(fetch, log_start, local, d.error);
  if (d.error != FetchError::kNone || d.diverging_epoch) return d;  // no state update
  if (fetch.fetch_offset < log_start || fetch.fetch_offset > log_end_) {
    d.error = FetchError::kOffsetOutOfRange;
    return d;
  }
  // KIP-903: a fetch from an older incarnation of the broker (lower broker
  // epoch than the metadata's) must not count (Replica.updateFetchStateOrThrow).
  auto broker = brokers_.find(fetch.replica);
  if (fetch.broker_epoch != kNoBrokerEpoch && broker != brokers_.end() && broker->second.epoch > fetch.broker_epoch) {
    d.error = FetchError::kNotLeaderOrFollower;
    return d;
  }
  FollowerProgress& progress = followers_.at(fetch.replica);
  const std::optional<Offset> previous_end = progress.log_end();
  progress.on_fetch(fetch.fetch_offset, fetch.log_start_offset, now_ms, log_end_, fetch.broker_epoch);
  maybe_expand_isr(fetch.replica);
  if (previous_end != progress.log_end() && maybe_increment_high_watermark(now_ms)) complete_waiting_produces();
  check_invariants();
  return d;
}

// --- ISR ----------------------------------------------------------------------

// Partition.isReplicaIsrEligible (KRaft): registered, unfenced, not in
// controlled shutdown, and its last fetch carried the registered broker
// epoch (or -1, which skips the check).
bool ReplicationCore::is_isr_eligible(NodeId id) const {
  auto broker = brokers_.find(id);
  auto progress = followers_.find(id);
  if (broker == brokers_.end() || progress == followers_.end()) return false;
  if (broker->second.fenced || broker->second.in_controlled_shutdown) return false;
  std::optional<BrokerEpoch> fetched = progress->second.broker_epoch();
  return fetched && (*fetched == kNoBrokerEpoch || *fetched == broker->second.epoch);
}

// Partition.maybeExpandIsr / isFollowerInSync: a follower joins once it
// has reached the HW *and* the start of this leader epoch; else a new
// leader elected from it could lack committed data between our HW and our
// log end.
void ReplicationCore::maybe_expand_isr(NodeId id) {
  if (isr_.in_flight() || isr_.contains(id) || !is_isr_eligible(id)) return;
  std::optional<Offset> end = followers_.at(id).log_end();
  if (!end || *end < high_watermark_ || *end < *epoch_start_offset_) return;
  std::vector<NodeId> new_isr = isr_.isr();
  new_isr.push_back(id);
  propose(std::move(new_isr), true);
}

// Partition.maybeShrinkIsr / getOutOfSyncReplicas: ISR followers that have
// not caught up within replica.lag.time.max.ms (stuck or slow). Never the
// leader itself; not while a change is in flight.
void ReplicationCore::maybe_shrink_isr(int64_t now_ms) {
  if (!is_leader() || isr_.in_flight()) return;
  std::vector<NodeId> keep;
  for (NodeId id : isr_.isr()) {
    const FollowerProgress* p = follower(id);
    bool out_of_sync = id != config_.self &&
                       (!p || !p->is_caught_up(log_end_, now_ms, config_.replica_lag_time_max_ms));
    if (!out_of_sync) keep.push_back(id);
  }
  if (keep.size() < isr_.isr().size()) propose(std::move(keep), false);
}

void ReplicationCore::tick(int64_t now_ms) {
  maybe_shrink_isr(now_ms);
  check_invariants();
}

// Partition.addBrokerEpochToIsr: each member with the broker epoch of its
// last fetch (ours from the metadata; -1 when unknown).
std::vector<IsrMember> ReplicationCore::with_broker_epochs(const std::vector<NodeId>& isr) const {
  std::vector<IsrMember> out;
  for (NodeId id : isr) {
    BrokerEpoch epoch = kNoBrokerEpoch;
    if (id == config_.self) {
      auto b = brokers_.find(id);
      if (b != brokers_.end()) epoch = b->second.epoch;
    } else if (const FollowerProgress* p = follower(id); p && p->broker_epoch()) {
      epoch = *p->broker_epoch();
    }
    out.push_back({id, epoch});
  }
  return out;
}

// prepareIsrExpand / prepareIsrShrink: enter the pending state, then send.
void ReplicationCore::propose(std::vector<NodeId> new_isr, bool expand) {
  AlterPartitionProposal p;
  p.id = next_proposal_id_++;
  p.leader = config_.self;
  p.leader_epoch = leader_epoch_;
  p.partition_epoch = partition_epoch_;
  p.new_isr = with_broker_epochs(new_isr);
  p.expand = expand;
  isr_.begin(p);
  ready_.alter_partition = std::move(p);
}

// Partition.handleAlterPartitionUpdate. An answer to anything but the
// pending proposal is out of date (the state changed meanwhile): ignored.
void ReplicationCore::on_alter_partition_result(uint64_t proposal_id, const AlterPartitionResult& result,
                                                int64_t now_ms) {
  if (!is_leader() || !isr_.pending() || isr_.pending()->id != proposal_id) return;
  // A different leader epoch or an older partition epoch: stay pending
  // until the metadata tells us more.
  if (result.leader_epoch != leader_epoch_ || result.partition_epoch < partition_epoch_) return;
  for (NodeId id : result.isr) ASSERT_MSG(contains(replicas_, id), "the controller's ISR within the replicas");
  ASSERT_MSG(contains(result.isr, config_.self), "the controller keeps the leader in its ISR");
  isr_.commit(result.isr);
  partition_epoch_ = result.partition_epoch;
  if (maybe_increment_high_watermark(now_ms)) complete_waiting_produces();
  check_invariants();
}

// Partition.handleAlterPartitionError.
void ReplicationCore::on_alter_partition_error(uint64_t proposal_id, AlterPartitionError error) {
  if (!is_leader() || !isr_.pending() || isr_.pending()->id != proposal_id) return;
  switch (error) {
    case AlterPartitionError::kOperationNotAttempted:
    case AlterPartitionError::kIneligibleReplica:
      // The controller says the request was not applied, by any controller.
      isr_.revert();
      break;
    case AlterPartitionError::kRetriable:
      ready_.alter_partition = *isr_.pending();
      break;
    default:
      break;  // stay pending until new metadata
  }
  check_invariants();
}

// --- High watermark -------------------------------------------------------

// Partition.maybeIncrementLeaderHW, without the min-ISR gate: the smallest
// log end over the leader and every follower in the maximal ISR (KIP-497),
// or caught up and ISR-eligible (so a follower about to join is not left
// behind forever). An unknown log end (no fetch since we became leader)
// holds the HW where it is.
Offset ReplicationCore::high_watermark_candidate(int64_t now_ms) const {
  Offset candidate = log_end_;
  for (const auto& [id, progress] : followers_) {
    bool counts = isr_.maximal_contains(id) ||
                  (progress.is_caught_up(log_end_, now_ms, config_.replica_lag_time_max_ms) && is_isr_eligible(id));
    if (!counts) continue;
    candidate = std::min(candidate, progress.log_end().value_or(kNoOffset));
  }
  return candidate;
}

bool ReplicationCore::maybe_increment_high_watermark(int64_t now_ms) {
  if (!is_leader()) return false;
  // Strict min ISR (KAFKA-15583, Kafka 3.7+; documented with KIP-966):
  // below min.insync.replicas nothing more becomes visible.
  if (is_under_min_isr()) return false;
  Offset candidate = high_watermark_candidate(now_ms);
  if (candidate <= high_watermark_) return false;  // never backwards on a leader
  ASSERT_MSG(candidate <= log_end_, "HW <= log end offset");
  for (NodeId id : isr_.maximal_isr()) {
    if (id == config_.self) continue;
    std::optional<Offset> end = followers_.at(id).log_end();
    ASSERT_MSG(end && candidate <= *end, "the HW never passes a maximal-ISR member's log end");
  }
  high_watermark_ = candidate;
  ready_.high_watermark = high_watermark_;
  return true;
}

}  // namespace samsa::replication

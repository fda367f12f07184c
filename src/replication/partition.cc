#include "replication/partition.h"

#include <algorithm>

#include "base/log.h"
#include "model/record_batch_header.h"
#include "storage/batch_check.h"

namespace samsa {

// Kafka's semantics (replication_types.h), from the Log's cache entries.
std::optional<replication::EpochEndOffset> LogEpochLookup::end_offset_for(LeaderEpoch epoch) const {
  return replication::end_offset_for_epoch(log_.leader_epochs(), epoch, log_.log_end_offset());
}

std::optional<LeaderEpoch> LogEpochLookup::latest_epoch() const {
  const std::vector<EpochEntry>& entries = log_.leader_epochs();
  if (entries.empty()) return std::nullopt;
  return entries.back().epoch;
}

namespace {
replication::ReplicationConfig core_config(NodeId self, const Log& log, int64_t replica_lag_time_max_ms) {
  replication::ReplicationConfig c;
  c.self = self;
  c.replica_lag_time_max_ms = replica_lag_time_max_ms;
  c.min_insync_replicas = log.config().min_insync_replicas;
  return c;
}

replication::PartitionRegistration registration(const PartitionState& p) {
  return {p.replicas, p.isr, p.leader, p.leader_epoch, PartitionEpoch(p.partition_epoch)};
}
}  // namespace

Partition::Partition(TopicPartition tp, Uuid topic_id, Log& log, NodeId self, std::optional<Offset> high_watermark,
                     Clock& clock, int64_t replica_lag_time_max_ms)
    : tp_(std::move(tp)),
      topic_id_(topic_id),
      log_(log),
      clock_(clock),
      core_(core_config(self, log, replica_lag_time_max_ms), log.log_end_offset(), high_watermark.value_or(Offset(0))) {}

void Partition::update_state(const PartitionState& state) {
  core_.set_min_insync_replicas(std::max(1, log_.config().min_insync_replicas));
  if (core_.apply(registration(state), LogEpochLookup(log_), clock_.monotonic_ms()) !=
      replication::RegistrationChange::kIgnored) {
    state_ = state;
  }
  perform_ready();
}

void Partition::make_follower(NodeId leader, LeaderEpoch epoch) {
  ASSERT(epoch >= core_.leader_epoch() && leader != core_.self());
  PartitionState next = state_;
  next.leader = leader;
  next.leader_epoch = epoch;
  next.partition_epoch = std::max(state_.partition_epoch, core_.partition_epoch().value()) + 1;
  update_state(next);
}

void Partition::make_leader(LeaderEpoch epoch) {
  ASSERT(epoch >= core_.leader_epoch());
  PartitionState next = state_;
  next.leader = core_.self();
  next.leader_epoch = epoch;
  next.partition_epoch = std::max(state_.partition_epoch, core_.partition_epoch().value()) + 1;
  if (std::find(next.isr.begin(), next.isr.end(), core_.self()) == next.isr.end()) next.isr.push_back(core_.self());
  update_state(next);
}

Result<AppendResult> Partition::append_as_leader(uint8_t* batches, size_t size) {
  ASSERT(is_leader());
  ASSIGN_OR_RETURN(AppendResult result, log_.append(batches, size, core_.leader_epoch()));
  core_.on_local_append(log_.log_end_offset(), clock_.monotonic_ms());
  perform_ready();
  return result;
}

Result<AppendResult> Partition::append_marker_as_leader(ProducerId producer, ProducerEpoch producer_epoch,
                                                       TxnMarker marker, bool require_higher_epoch) {
  ASSERT(is_leader());
  ASSIGN_OR_RETURN(AppendResult result,
                   log_.append_marker(producer, producer_epoch, marker, core_.leader_epoch(), require_higher_epoch));
  if (result.producer_fault) return result;  // nothing written
  core_.on_local_append(log_.log_end_offset(), clock_.monotonic_ms());
  perform_ready();
  return result;
}

replication::FetchDecision Partition::on_follower_fetch(const replication::FollowerFetch& fetch) {
  replication::FetchDecision d =
      core_.on_follower_fetch(fetch, log_.log_start_offset(), LogEpochLookup(log_), clock_.monotonic_ms());
  perform_ready();
  return d;
}

std::optional<replication::EpochEndOffset> Partition::end_offset_for(LeaderEpoch epoch) const {
  return LogEpochLookup(log_).end_offset_for(epoch);
}

namespace {
// The epochs only grow batch to batch (Log checks it), so the last whole
// batch's is the newest; nullopt if the bytes do not frame (Log refuses them).
std::optional<LeaderEpoch> last_batch_epoch(ByteView batches) {
  std::optional<LeaderEpoch> last;
  for (size_t at = 0; at < batches.size();) {
    Result<BatchFrame> frame = parse_batch_frame(batches.subspan(at));
    if (!frame.ok() || size_t(frame->size) > batches.size() - at) return std::nullopt;
    last = RecordBatchHeader(batches.data() + at).partition_leader_epoch();
    at += size_t(frame->size);
  }
  return last;
}
}  // namespace

Result<FollowerAppendResult> Partition::append_as_follower(ByteView batches) {
  ASSERT(is_follower());
  // The leader serves only its own epoch and older ones (it checked our
  // CurrentLeaderEpoch); a newer one is a bad peer, and the core asserts
  // it never sees one.
  if (std::optional<LeaderEpoch> last = last_batch_epoch(batches); last && *last > core_.leader_epoch()) {
    return Error(ErrorKind::kCorrupt, tp_.to_string() + ": a fetched batch has leader epoch " +
                                          std::to_string(last->value()) + ", newer than the leader's " +
                                          std::to_string(core_.leader_epoch().value()));
  }
  const Offset old_end = log_.log_end_offset();
  ASSIGN_OR_RETURN(FollowerAppendResult r, log_.append_as_follower(batches));
  core_.on_follower_append(old_end, log_.log_end_offset(), r.last_epoch);
  perform_ready();
  return r;
}

void Partition::on_leader_high_watermark(Offset leader_high_watermark) {
  core_.on_leader_high_watermark(leader_high_watermark);
  perform_ready();
}

void Partition::on_diverging_epoch(const replication::EpochEndOffset& leader) {
  core_.on_diverging_epoch(leader, LogEpochLookup(log_));
  perform_ready();
}

void Partition::on_fetch_out_of_range(Offset leader_log_start, Offset leader_log_end) {
  core_.on_fetch_out_of_range(leader_log_start, leader_log_end);
  perform_ready();
}

// The Ready contract (replication_core.h), as far as one node needs it.
void Partition::perform_ready() {
  if (!core_.has_ready()) return;
  replication::Ready ready = core_.take_ready();
  if (ready.truncate) {
    Status cut = ready.truncate->fully ? log_.truncate_fully_and_start_at(ready.truncate->offset)
                                       : log_.truncate_to(ready.truncate->offset);
    if (!cut.ok()) LOG_ERROR("replicas", "truncating {} failed: {}", tp_.to_string(), cut.error().to_string());
  }
  if (ready.assign_epoch_start) {
    // UnifiedLog.maybeAssignEpochStartOffset at election: followers whose
    // logs hold later-epoch data find this epoch in our cache.
    Status st = log_.assign_leader_epoch(ready.assign_epoch_start->epoch, ready.assign_epoch_start->start_offset);
    if (!st.ok()) LOG_ERROR("replicas", "{}: recording the epoch start failed: {}", tp_.to_string(), st.error().to_string());
  }
  // high_watermark: LogManager reads it for the checkpoint; delayed fetches
  // wake through the listener.
  if (ready.high_watermark && on_high_watermark_) on_high_watermark_(tp_);
  if (ready.alter_partition) {
    if (on_alter_partition_) {
      on_alter_partition_(*this, *ready.alter_partition);
    } else {
      LOG_WARN("replicas", "{}: an ISR change was proposed, but no AlterPartition channel is set", tp_.to_string());
    }
  }
  for (const replication::ProduceCompletion& c : ready.completed_produces) {
    auto it = produce_waits_.find(c.id);
    if (it == produce_waits_.end()) continue;  // cancelled meanwhile
    ProduceDone done = std::move(it->second);
    produce_waits_.erase(it);
    done(c.error);
  }
}

void Partition::update_brokers(const MetadataImage& image) {
  for (NodeId id : core_.replicas()) {
    const BrokerState* b = image.broker(id);
    if (!b) {
      core_.set_broker(id, std::nullopt);
    } else {
      core_.set_broker(id, replication::BrokerStatus{b->epoch, b->fenced, b->in_controlled_shutdown});
    }
  }
}

std::optional<replication::ProduceError> Partition::await_produce(replication::ProduceWaitId id,
                                                                  Offset required_offset, ProduceDone done) {
  std::optional<replication::ProduceError> now = core_.await_produce(id, required_offset);
  if (!now) produce_waits_.emplace(id, std::move(done));
  return now;
}

void Partition::cancel_produce(replication::ProduceWaitId id) {
  core_.cancel_produce(id);
  produce_waits_.erase(id);
}

void Partition::tick() {
  core_.tick(clock_.monotonic_ms());
  perform_ready();
}

void Partition::on_alter_partition_answer(uint64_t proposal_id, const AlterPartitionAnswer& answer) {
  if (const auto* result = std::get_if<replication::AlterPartitionResult>(&answer)) {
    core_.on_alter_partition_result(proposal_id, *result, clock_.monotonic_ms());
  } else {
    core_.on_alter_partition_error(proposal_id, std::get<replication::AlterPartitionError>(answer));
  }
  perform_ready();
}

std::vector<std::pair<NodeId, Offset>> Partition::followers_serving(Offset offset) const {
  std::vector<std::pair<NodeId, Offset>> out;
  if (!is_leader()) return out;
  for (NodeId id : core_.isr()) {
    const replication::FollowerProgress* f = id == core_.self() ? nullptr : core_.follower(id);
    if (!f || !f->log_end()) continue;
    if (*f->log_end() >= offset && f->log_start() <= offset) out.emplace_back(id, *f->log_end());
  }
  return out;
}

}  // namespace samsa

// ReplicationCore: metadata changes, invariants and the Ready. The leader's
// rules are in replication_leader.cc, the follower's in
// replication_follower.cc.
#include "replication/replication_core.h"

#include <algorithm>

#include "base/assert.h"

namespace samsa::replication {

const char* to_string(Role role) {
  switch (role) {
    case Role::kNone: return "none";
    case Role::kLeader: return "leader";
    case Role::kFollower: return "follower";
  }
  return "?";
}

const char* to_string(FetchError error) {
  switch (error) {
    case FetchError::kNone: return "NONE";
    case FetchError::kNotLeaderOrFollower: return "NOT_LEADER_OR_FOLLOWER";
    case FetchError::kFencedLeaderEpoch: return "FENCED_LEADER_EPOCH";
    case FetchError::kUnknownLeaderEpoch: return "UNKNOWN_LEADER_EPOCH";
    case FetchError::kOffsetOutOfRange: return "OFFSET_OUT_OF_RANGE";
  }
  return "?";
}

const char* to_string(ProduceError error) {
  switch (error) {
    case ProduceError::kNone: return "NONE";
    case ProduceError::kNotLeaderOrFollower: return "NOT_LEADER_OR_FOLLOWER";
    case ProduceError::kNotEnoughReplicas: return "NOT_ENOUGH_REPLICAS";
    case ProduceError::kNotEnoughReplicasAfterAppend: return "NOT_ENOUGH_REPLICAS_AFTER_APPEND";
  }
  return "?";
}

ReplicationCore::ReplicationCore(ReplicationConfig config, Offset log_end, Offset high_watermark)
    : config_(config), log_end_(log_end), high_watermark_(std::clamp(high_watermark, Offset(0), log_end)) {
  ASSERT(log_end >= Offset(0));
}

RegistrationChange ReplicationCore::apply(const PartitionRegistration& r, const LeaderEpochLookup& local,
                                          int64_t now_ms) {
  return r.leader == config_.self ? become_leader(r, now_ms) : become_follower(r, local, now_ms);
}

namespace {
void check_registration(const PartitionRegistration& r, NodeId self) {
  ASSERT_MSG(contains(r.replicas, self), "a registration applied on a broker that holds no replica");
  for (NodeId id : r.isr) ASSERT_MSG(contains(r.replicas, id), "ISR member outside the replicas");
}
}  // namespace

// Partition.makeLeader. A registration with the same partition epoch is
// applied again (an AlterPartition answer may have brought us there first),
// but keeps a pending ISR change (see same_version).
RegistrationChange ReplicationCore::become_leader(const PartitionRegistration& r, int64_t now_ms) {
  if (r.partition_epoch < partition_epoch_) return RegistrationChange::kIgnored;
  ASSERT_MSG(r.leader_epoch >= leader_epoch_, "leader epoch went backwards under a newer partition epoch");
  ASSERT(r.leader == config_.self);
  check_registration(r, config_.self);
  ASSERT_MSG(contains(r.isr, config_.self), "the leader is in its ISR");

  const bool new_leader = role_ != Role::kLeader;
  const bool new_epoch = r.leader_epoch > leader_epoch_;
  const bool was_follower = role_ == Role::kFollower;
  // The same version again (its AlterPartition answer already brought it,
  // or a repeat) carries no news: a change proposed since stays pending.
  // Kafka's makeLeader drops it, and its answer is then ignored: if the
  // controller applied an expansion, the leader runs on an ISR without the
  // new member (the HW may pass it) until the next record arrives.
  const bool same_version = !new_leader && r.partition_epoch == partition_epoch_ && r.leader_epoch == leader_epoch_;
  role_ = Role::kLeader;
  leader_ = config_.self;
  replicas_ = r.replicas;
  if (!same_version || r.isr != isr_.isr()) isr_.commit(r.isr);
  if (was_follower) followers_.clear();
  sync_follower_set();
  if (new_epoch || new_leader) {
    // Remember where this epoch starts: followers with later-epoch data
    // from successive elections must find our epoch in the cache.
    epoch_start_offset_ = log_end_;
    ready_.assign_epoch_start = EpochStart{r.leader_epoch, log_end_};
    leader_epoch_ = r.leader_epoch;
    // Follower offsets learnt in an older epoch are no evidence for this
    // one: between the two a follower may have followed another leader and
    // truncated (we may have missed those epochs: late metadata, a metadata
    // snapshot). Kafka keeps them when the leader stays (isNewLeader false);
    // we forget them on every new epoch, so the HW waits for one fetch.
    reset_followers(now_ms, /*forget_offsets=*/true);
  }
  partition_epoch_ = r.partition_epoch;
  if (maybe_increment_high_watermark(now_ms)) complete_waiting_produces();
  check_invariants();
  return new_epoch ? RegistrationChange::kNewLeaderEpoch : RegistrationChange::kUpdated;
}

// Partition.makeFollower: the ISR is the leader's business; a follower
// keeps none. Waiting acks=-1 produces end with NOT_LEADER_OR_FOLLOWER
// (ReplicaManager completes them when it makes followers).
RegistrationChange ReplicationCore::become_follower(const PartitionRegistration& r, const LeaderEpochLookup& local,
                                                    int64_t now_ms) {
  (void)now_ms;
  if (r.partition_epoch < partition_epoch_) return RegistrationChange::kIgnored;
  ASSERT_MSG(r.leader_epoch >= leader_epoch_, "leader epoch went backwards under a newer partition epoch");
  ASSERT(r.leader != config_.self);
  check_registration(r, config_.self);

  const bool new_epoch = r.leader_epoch > leader_epoch_ || role_ != Role::kFollower;
  if (role_ == Role::kLeader) fail_waiting_produces(ProduceError::kNotLeaderOrFollower);
  role_ = Role::kFollower;
  leader_ = r.leader;
  leader_epoch_ = r.leader_epoch;
  partition_epoch_ = r.partition_epoch;
  replicas_ = r.replicas;
  isr_.commit({});
  epoch_start_offset_.reset();
  followers_.clear();
  // A log without epochs cannot find its divergence point: cut back to the
  // high watermark before fetching (AbstractFetcherThread, partitions
  // without epochs are truncated to their HW).
  if (new_epoch && !local.latest_epoch() && high_watermark_ < log_end_) {
    truncate_to(Truncation{high_watermark_, false});
  }
  check_invariants();
  return new_epoch ? RegistrationChange::kNewLeaderEpoch : RegistrationChange::kUpdated;
}

void ReplicationCore::set_broker(NodeId id, std::optional<BrokerStatus> status) {
  if (status) {
    brokers_[id] = *status;
  } else {
    brokers_.erase(id);
  }
}

void ReplicationCore::set_min_insync_replicas(int32_t min_insync_replicas) {
  ASSERT(min_insync_replicas >= 1);
  config_.min_insync_replicas = min_insync_replicas;
}

Ready ReplicationCore::take_ready() {
  Ready out = std::move(ready_);
  ready_ = Ready{};
  return out;
}

const FollowerProgress* ReplicationCore::follower(NodeId id) const {
  auto it = followers_.find(id);
  return it == followers_.end() ? nullptr : &it->second;
}

// Partition.effectiveMinIsr: min.insync.replicas above the replication
// factor means "all replicas".
int32_t ReplicationCore::effective_min_isr() const {
  return std::min<int32_t>(config_.min_insync_replicas, int32_t(replicas_.size()));
}

bool ReplicationCore::is_under_min_isr() const {
  return is_leader() && int32_t(isr_.isr().size()) < effective_min_isr();
}

// Followers known to a leader are exactly the other replicas; a replica
// that stays keeps its progress (Partition.updateAssignmentAndIsr).
void ReplicationCore::sync_follower_set() {
  std::erase_if(followers_, [&](const auto& kv) { return !contains(replicas_, kv.first); });
  for (NodeId id : replicas_) {
    if (id != config_.self) followers_.try_emplace(id);
  }
}

void ReplicationCore::reset_followers(int64_t now_ms, bool forget_offsets) {
  for (auto& [id, progress] : followers_) progress.reset(now_ms, log_end_, forget_offsets, isr_.contains(id));
}

void ReplicationCore::truncate_to(Truncation t) {
  ASSERT(role_ == Role::kFollower);
  ASSERT(t.fully || t.offset <= log_end_);
  ready_.truncate = t;
  log_end_ = t.offset;
  if (t.fully) {
    high_watermark_ = t.offset;
    ready_.high_watermark = high_watermark_;
  } else if (high_watermark_ > log_end_) {
    // Cutting below the HW happens only after an unclean election
    // (KAFKA-7414: logged as possible data loss by the caller).
    high_watermark_ = log_end_;
    ready_.high_watermark = high_watermark_;
  }
}

void ReplicationCore::check_invariants() const {
  ASSERT_MSG(high_watermark_ <= log_end_, "HW <= log end offset");
  ASSERT(high_watermark_ >= Offset(0));
  if (role_ != Role::kLeader) {
    ASSERT(followers_.empty());
    ASSERT(!isr_.in_flight());
    return;
  }
  ASSERT_MSG(isr_.contains(config_.self), "the leader is in its ISR");
  for (NodeId id : isr_.maximal_isr()) ASSERT_MSG(contains(replicas_, id), "ISR within the replicas");
  ASSERT(epoch_start_offset_.has_value() && *epoch_start_offset_ <= log_end_);
}

}  // namespace samsa::replication

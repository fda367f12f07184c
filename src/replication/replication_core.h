#pragma once
// ReplicationCore: the replication state of one partition on one broker, as
// a pure, deterministic state machine (docs/design.md, "Replication").
// Kafka's Partition / Replica (core/.../cluster/) and the follower half of
// AbstractFetcherThread, minus every I/O: no log, no socket, no clock, no
// thread. The broker (and the simulator) drive it:
//
//   inputs  - metadata: apply()/become_leader()/become_follower() with the
//             partition's registration (stale partition epochs are ignored),
//             set_broker() (epochs and fencing of the replicas' brokers),
//             set_min_insync_replicas();
//           - leader: check_append() before a produce, on_local_append()
//             after it, await_produce() for acks=-1, on_follower_fetch(),
//             tick() (time), on_alter_partition_result()/_error();
//           - follower: fetch_position(), on_follower_append(),
//             on_leader_high_watermark(), on_diverging_epoch(),
//             on_fetch_out_of_range().
//   outputs - answers returned at once (FetchDecision, ProduceError), and a
//             Ready (take_ready()) of work for the caller.
//
// Ready contract: the caller performs a Ready completely, in this order,
// before the next input: (1) log changes: `truncate`, then
// `assign_epoch_start` (the leader-epoch cache); (2) `high_watermark`: store
// it (replication-offset-checkpoint), wake delayed fetches; (3) send
// `alter_partition` to the controller; (4) answer `completed_produces`.
// The core already counts (1) as done: its log end moves when it asks.
//
// Time: every input that needs it takes now_ms (monotonic milliseconds).
// Invariants (ASSERTed after every input, see check_invariants()): HW <=
// log end; on a leader the HW never decreases and never passes the log end
// of a maximal-ISR member; the leader is in the ISR and the ISR within the
// replicas; epochs only grow; follower appends are contiguous and carry no
// epoch newer than the leader's.
//
// Threading: not thread-safe; one owner (the partition's event loop).

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "replication/follower_progress.h"
#include "replication/isr_state.h"
#include "replication/replication_types.h"

namespace samsa::replication {

struct ReplicationConfig {
  NodeId self;
  int64_t replica_lag_time_max_ms = 30000;  // replica.lag.time.max.ms
  int32_t min_insync_replicas = 1;          // min.insync.replicas (the topic's)
};

struct Ready {
  std::optional<Truncation> truncate;            // follower: cut the local log
  std::optional<EpochStart> assign_epoch_start;  // new leader: record (epoch, log end) in the epoch cache
  std::optional<Offset> high_watermark;          // the HW changed
  std::optional<AlterPartitionProposal> alter_partition;
  std::vector<ProduceCompletion> completed_produces;
  bool empty() const {
    return !truncate && !assign_epoch_start && !high_watermark && !alter_partition && completed_produces.empty();
  }
};

// What a metadata registration did.
enum class RegistrationChange : uint8_t {
  kIgnored,         // older partition epoch than ours: stale, nothing changed
  kUpdated,         // same leader epoch: replicas/ISR refreshed
  kNewLeaderEpoch,  // new leader epoch: a follower (re)starts fetching
};

class ReplicationCore {
 public:
  // `log_end` is the local log's end; `high_watermark` the checkpointed HW
  // (clamped to the log end, as Kafka does at load).
  ReplicationCore(ReplicationConfig config, Offset log_end, Offset high_watermark);

  // --- Metadata (ReplicaManager.applyDelta -> Partition.makeLeader / makeFollower) ---
  RegistrationChange apply(const PartitionRegistration& r, const LeaderEpochLookup& local, int64_t now_ms);
  RegistrationChange become_leader(const PartitionRegistration& r, int64_t now_ms);
  RegistrationChange become_follower(const PartitionRegistration& r, const LeaderEpochLookup& local, int64_t now_ms);
  // nullopt: the broker is not registered (never ISR-eligible).
  void set_broker(NodeId id, std::optional<BrokerStatus> status);
  void set_min_insync_replicas(int32_t min_insync_replicas);

  // --- Leader ---
  // Before appending a produce (Partition.appendRecordsToLeader).
  ProduceError check_append(int16_t acks) const;
  // The local log now ends at new_log_end (a leader append).
  void on_local_append(Offset new_log_end, int64_t now_ms);
  // acks=-1: the produce is answered once the HW reaches required_offset
  // (its last offset + 1). Returns the answer if it is known now; else the
  // answer comes in a later Ready. The timeout is the caller's: it calls
  // cancel_produce() and answers REQUEST_TIMED_OUT.
  std::optional<ProduceError> await_produce(ProduceWaitId id, Offset required_offset);
  void cancel_produce(ProduceWaitId id);
  // Partition.checkEnoughReplicasReachOffset: nullopt while waiting.
  std::optional<ProduceError> check_enough_replicas(Offset required_offset) const;
  // A follower's fetch of this partition, before the read. `log_start` is
  // the local log start.
  FetchDecision on_follower_fetch(const FollowerFetch& fetch, Offset log_start, const LeaderEpochLookup& local,
                                  int64_t now_ms);
  // The isr-expiration check (Kafka runs it every replica.lag.time.max.ms / 2).
  void tick(int64_t now_ms);
  void on_alter_partition_result(uint64_t proposal_id, const AlterPartitionResult& result, int64_t now_ms);
  void on_alter_partition_error(uint64_t proposal_id, AlterPartitionError error);

  // --- Follower ---
  FetchPosition fetch_position(const LeaderEpochLookup& local) const;
  // The caller appended the leader's batches [first_offset, new_log_end) as
  // they are; the last one has leader epoch last_batch_epoch.
  void on_follower_append(Offset first_offset, Offset new_log_end, LeaderEpoch last_batch_epoch);
  // The HW a fetch response carried (ignore it in a response that also
  // carried a DivergingEpoch: truncate first, KAFKA-14704).
  void on_leader_high_watermark(Offset leader_high_watermark);
  void on_diverging_epoch(const EpochEndOffset& leader, const LeaderEpochLookup& local);
  void on_fetch_out_of_range(Offset leader_log_start, Offset leader_log_end);

  bool has_ready() const { return !ready_.empty(); }
  Ready take_ready();

  // --- State ---
  Role role() const { return role_; }
  bool is_leader() const { return role_ == Role::kLeader; }
  NodeId self() const { return config_.self; }
  NodeId leader() const { return leader_; }
  LeaderEpoch leader_epoch() const { return leader_epoch_; }
  PartitionEpoch partition_epoch() const { return partition_epoch_; }
  const std::vector<NodeId>& replicas() const { return replicas_; }
  const std::vector<NodeId>& isr() const { return isr_.isr(); }  // committed
  std::vector<NodeId> maximal_isr() const { return isr_.maximal_isr(); }
  const std::optional<AlterPartitionProposal>& pending_alter_partition() const { return isr_.pending(); }
  Offset log_end_offset() const { return log_end_; }
  Offset high_watermark() const { return high_watermark_; }
  // Leader: the log end when it took this epoch (nullopt on a follower).
  std::optional<Offset> leader_epoch_start_offset() const { return epoch_start_offset_; }
  // A new leader's HW may lag the committed offset until it reaches the
  // epoch start: ListOffsets answers OFFSET_NOT_AVAILABLE meanwhile
  // (Partition.fetchOffsetForTimestamp).
  bool high_watermark_trusted() const { return !epoch_start_offset_ || high_watermark_ >= *epoch_start_offset_; }
  int32_t effective_min_isr() const;
  bool is_under_min_isr() const;
  const FollowerProgress* follower(NodeId id) const;
  size_t waiting_produces() const { return waiting_by_id_.size(); }
  const ReplicationConfig& config() const { return config_; }

 private:
  void reset_followers(int64_t now_ms, bool forget_offsets);
  void sync_follower_set();
  bool is_isr_eligible(NodeId id) const;
  FetchError check_fetch(const FollowerFetch& fetch) const;
  std::optional<EpochEndOffset> divergence(const FollowerFetch& fetch, Offset log_start,
                                           const LeaderEpochLookup& local, FetchError& error) const;
  void maybe_expand_isr(NodeId id);
  void maybe_shrink_isr(int64_t now_ms);
  void propose(std::vector<NodeId> new_isr, bool expand);
  std::vector<IsrMember> with_broker_epochs(const std::vector<NodeId>& isr) const;
  Offset high_watermark_candidate(int64_t now_ms) const;
  bool maybe_increment_high_watermark(int64_t now_ms);
  void complete_waiting_produces();
  void fail_waiting_produces(ProduceError error);
  void truncate_to(Truncation t);
  void check_invariants() const;

  ReplicationConfig config_;
  Role role_ = Role::kNone;
  NodeId leader_ = kNoNode;
  LeaderEpoch leader_epoch_ = kNoLeaderEpoch;
  PartitionEpoch partition_epoch_{-1};
  std::vector<NodeId> replicas_;
  IsrState isr_;
  std::optional<Offset> epoch_start_offset_;  // leader only
  Offset log_end_;
  Offset high_watermark_;
  std::map<NodeId, FollowerProgress> followers_;  // leader: every replica but self
  std::map<NodeId, BrokerStatus> brokers_;
  uint64_t next_proposal_id_ = 1;
  std::multimap<Offset, ProduceWaitId> waiting_;  // required offset -> wait
  std::map<ProduceWaitId, Offset> waiting_by_id_;
  Ready ready_;
};

}  // namespace samsa::replication

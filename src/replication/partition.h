#pragma once
// Partition: this broker's replica of one partition — its Log and its
// replication state (the pure ReplicationCore, replication_core.h), driven
// together. It performs the core's Ready on the Log.
//
// A leader serves its followers' fetches through on_follower_fetch(); a
// follower's replica fetcher (replica_fetcher.h) appends through
// append_as_follower() and the on_* calls. A leader's acks=-1 produces wait
// here (await_produce, answered when the core completes them); its ISR
// changes go out through the AlterPartition listener and their answers come
// back through on_alter_partition_answer (ReplicaManager carries both).
//
// Loop-thread only, like the Log it wraps.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "controller/metadata_image.h"
#include "model/ids.h"
#include "model/uuid.h"
#include "replication/alter_partition_channel.h"
#include "replication/replication_core.h"
#include "storage/log.h"

namespace samsa {

// The Log's leader-epoch cache as the core reads it.
class LogEpochLookup final : public replication::LeaderEpochLookup {
 public:
  explicit LogEpochLookup(const Log& log) : log_(log) {}
  std::optional<replication::EpochEndOffset> end_offset_for(LeaderEpoch epoch) const override;
  std::optional<LeaderEpoch> latest_epoch() const override;

 private:
  const Log& log_;
};

class Partition {
 public:
  // `high_watermark` is the checkpointed one (replication-offset-checkpoint),
  // if any. `clock` gives the core its time (monotonic);
  // replica.lag.time.max.ms how long an ISR follower may stay behind.
  Partition(TopicPartition tp, Uuid topic_id, Log& log, NodeId self, std::optional<Offset> high_watermark,
            Clock& clock, int64_t replica_lag_time_max_ms = 30000);

  const TopicPartition& topic_partition() const { return tp_; }
  const Uuid& topic_id() const { return topic_id_; }
  Log& log() { return log_; }
  const Log& log() const { return log_; }

  bool is_leader() const { return core_.is_leader(); }
  NodeId leader() const { return core_.leader(); }
  LeaderEpoch leader_epoch() const { return core_.leader_epoch(); }
  const std::vector<NodeId>& isr() const { return core_.isr(); }
  // Applies the metadata image's view of this partition (leader, epochs,
  // replicas, ISR); an older partition epoch is ignored.
  void update_state(const PartitionState& state);
  // An explicit leadership change (ReplicaManager::become_follower /
  // become_leader, until the controller drives them through metadata): the
  // last applied state with a new leader and epoch, as a newer partition
  // epoch. `epoch` must not be older than the current one.
  void make_follower(NodeId leader, LeaderEpoch epoch);
  void make_leader(LeaderEpoch epoch);

  Offset high_watermark() const { return core_.high_watermark(); }
  // A leader's followers that could serve a consumer's fetch at `offset`
  // now (KIP-392): in the ISR, with `offset` between their log start and
  // log end as their last fetch told. {id, log end}.
  std::vector<std::pair<NodeId, Offset>> followers_serving(Offset offset) const;
  // Appends batches already validated by the caller, as leader; offsets are
  // assigned in place in `batches`.
  Result<AppendResult> append_as_leader(uint8_t* batches, size_t size);
  // A transaction marker, as leader (Log::append_marker).
  Result<AppendResult> append_marker_as_leader(ProducerId producer, ProducerEpoch producer_epoch, TxnMarker marker,
                                               bool require_higher_epoch);
  // The last stable offset (Log::last_stable_offset at this replica's HW):
  // read_committed consumers read below it. <= high_watermark().
  Offset last_stable_offset() const { return log_.last_stable_offset(high_watermark()); }

  const replication::ReplicationCore& core() const { return core_; }

  // The brokers of the image (epochs, fencing, controlled shutdown): who may
  // join the ISR (KIP-841, KIP-903).
  void update_brokers(const MetadataImage& image);

  // --- Leader: acks=-1 (Kafka's DelayedProduce on this partition) ---
  using ProduceDone = std::function<void(replication::ProduceError)>;
  // The produce whose batch ends before required_offset is answered once the
  // HW covers it. Returns the answer if it is known now (`done` is then
  // dropped); else `done` is called later, once, unless cancel_produce(id)
  // comes first. `id` is the caller's, unique on this broker.
  std::optional<replication::ProduceError> await_produce(replication::ProduceWaitId id, Offset required_offset,
                                                         ProduceDone done);
  void cancel_produce(replication::ProduceWaitId id);
  size_t waiting_produces() const { return produce_waits_.size(); }

  // --- Leader: the ISR (Partition.maybeShrinkIsr, AlterPartition) ---
  // The isr-expiration check (every replica.lag.time.max.ms / 2).
  void tick();
  // Called (from perform_ready) with each proposal to send to the controller.
  using AlterPartitionListener = std::function<void(Partition&, const replication::AlterPartitionProposal&)>;
  void set_alter_partition_listener(AlterPartitionListener listener) { on_alter_partition_ = std::move(listener); }
  void on_alter_partition_answer(uint64_t proposal_id, const AlterPartitionAnswer& answer);

  // Called (on this loop) whenever the high watermark moves, after the
  // change: the broker wakes delayed fetches with it. Never re-entered from
  // inside the change itself if the listener posts its work.
  void set_high_watermark_listener(std::function<void(const TopicPartition&)> listener) {
    on_high_watermark_ = std::move(listener);
  }

  // --- Leader: a follower's fetch (Partition.fetchRecords, isFromFollower) ---
  // Checks the fetcher's epoch, membership and divergence, then records its
  // fetch offset (which may advance the HW). Before the read: read up to
  // decision.log_end_offset when it serves_records().
  replication::FetchDecision on_follower_fetch(const replication::FollowerFetch& fetch);
  // OffsetForLeaderEpoch / the divergence check: the leader-epoch cache.
  std::optional<replication::EpochEndOffset> end_offset_for(LeaderEpoch epoch) const;

  // --- Follower (the replica fetcher's side) ---
  bool is_follower() const { return core_.role() == replication::Role::kFollower; }
  replication::FetchPosition fetch_position() const { return core_.fetch_position(LogEpochLookup(log_)); }
  // Appends the leader's batches as they are (Log::append_as_follower).
  // Refused (nothing written) if a batch claims an epoch newer than the
  // leader epoch we follow.
  Result<FollowerAppendResult> append_as_follower(ByteView batches);
  // The HW a fetch response carried (clamped to our log end).
  void on_leader_high_watermark(Offset leader_high_watermark);
  // A DivergingEpoch answer: truncate to where the logs agree.
  void on_diverging_epoch(const replication::EpochEndOffset& leader);
  void on_fetch_out_of_range(Offset leader_log_start, Offset leader_log_end);

 private:
  void perform_ready();

  TopicPartition tp_;
  Uuid topic_id_;
  Log& log_;
  Clock& clock_;
  replication::ReplicationCore core_;
  PartitionState state_;  // the last state applied
  std::function<void(const TopicPartition&)> on_high_watermark_;
  AlterPartitionListener on_alter_partition_;
  std::map<replication::ProduceWaitId, ProduceDone> produce_waits_;
};

}  // namespace samsa

#pragma once
// Partition: this broker's replica of one partition — its Log and its
// replication state (the pure ReplicationCore, replication_core.h), driven
// together. It performs the core's Ready on the Log.
//
// Today the broker runs one node: every partition is led here with an ISR
// of one, so the high watermark follows the log end at once. Follower
// fetching, AlterPartition and the acks=-1 purgatory come next (issue 15)
// and reach the core through this class.
//
// Loop-thread only, like the Log it wraps.

#include <cstdint>
#include <optional>
#include <vector>

#include "base/clock.h"
#include "controller/metadata_image.h"
#include "model/ids.h"
#include "model/uuid.h"
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
  // if any. `clock` gives the core its time (monotonic).
  Partition(TopicPartition tp, Uuid topic_id, Log& log, NodeId self, std::optional<Offset> high_watermark,
            Clock& clock);

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

  Offset high_watermark() const { return core_.high_watermark(); }
  // Appends batches already validated by the caller, as leader; offsets are
  // assigned in place in `batches`.
  Result<AppendResult> append_as_leader(uint8_t* batches, size_t size);

  const replication::ReplicationCore& core() const { return core_; }

 private:
  void perform_ready();

  TopicPartition tp_;
  Uuid topic_id_;
  Log& log_;
  Clock& clock_;
  replication::ReplicationCore core_;
};

}  // namespace samsa

#pragma once
// Partition: this broker's replica of one partition — its log, its role
// (leader or follower) and epoch, and the high watermark (offsets below it
// are committed: on every ISR member). With the ISR being the leader alone,
// the high watermark follows the log end at once; follower progress is
// tracked here when replication adds followers.
//
// Loop-thread only, like the Log it wraps.

#include <map>
#include <vector>

#include "model/ids.h"
#include "model/uuid.h"
#include "storage/log.h"

namespace samsa {

class Partition {
 public:
  Partition(TopicPartition tp, Uuid topic_id, Log& log, NodeId self)
      : tp_(std::move(tp)), topic_id_(topic_id), log_(log), self_(self) {}

  const TopicPartition& topic_partition() const { return tp_; }
  const Uuid& topic_id() const { return topic_id_; }
  Log& log() { return log_; }
  const Log& log() const { return log_; }

  bool is_leader() const { return leader_ == self_; }
  NodeId leader() const { return leader_; }
  LeaderEpoch leader_epoch() const { return leader_epoch_; }
  const std::vector<NodeId>& isr() const { return isr_; }
  // Applies the controller's view of this partition (leader, epoch, ISR).
  void update_state(NodeId leader, LeaderEpoch epoch, std::vector<NodeId> isr);

  Offset high_watermark() const { return high_watermark_; }
  // Appends batches already validated by the caller, as leader; offsets are
  // assigned in place in `batches`.
  Result<AppendResult> append_as_leader(uint8_t* batches, size_t size);

 private:
  void maybe_advance_high_watermark();

  TopicPartition tp_;
  Uuid topic_id_;
  Log& log_;
  NodeId self_;
  NodeId leader_ = kNoNode;
  LeaderEpoch leader_epoch_{0};
  std::vector<NodeId> isr_;
  std::map<NodeId, Offset> follower_log_end_;  // filled by follower fetches
  Offset high_watermark_{0};
};

}  // namespace samsa

#include "replication/partition.h"

#include <algorithm>

namespace samsa {

void Partition::update_state(NodeId leader, LeaderEpoch epoch, std::vector<NodeId> isr) {
  ASSERT(epoch >= leader_epoch_);
  leader_ = leader;
  leader_epoch_ = epoch;
  isr_ = std::move(isr);
  if (is_leader()) maybe_advance_high_watermark();
}

Result<AppendResult> Partition::append_as_leader(uint8_t* batches, size_t size) {
  ASSERT(is_leader());
  ASSIGN_OR_RETURN(AppendResult result, log_.append(batches, size, leader_epoch_));
  maybe_advance_high_watermark();
  return result;
}

void Partition::maybe_advance_high_watermark() {
  // The high watermark is the smallest log end among ISR members; it never
  // moves backwards on the leader.
  Offset candidate = log_.log_end_offset();
  for (NodeId id : isr_) {
    if (id == self_) continue;
    auto it = follower_log_end_.find(id);
    candidate = std::min(candidate, it == follower_log_end_.end() ? Offset(0) : it->second);
  }
  high_watermark_ = std::max(high_watermark_, candidate);
}

}  // namespace samsa

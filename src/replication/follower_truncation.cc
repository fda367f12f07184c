#include "replication/follower_truncation.h"

#include <algorithm>

namespace samsa::replication {

TruncationTarget truncation_target(const EpochEndOffset& leader, const LeaderEpochLookup& local, Offset local_log_end,
                                   Offset local_high_watermark) {
  if (leader.end_offset == kNoOffset) {
    // The leader does not know the epoch at all: fall back to the high
    // watermark (the follower's initial fetch offset in Kafka).
    return {std::min(local_high_watermark, local_log_end), true};
  }
  if (leader.epoch == kNoLeaderEpoch) {
    // A leader that answers offsets without epochs (OffsetForLeaderEpoch v0).
    return {std::min(leader.end_offset, local_log_end), true};
  }
  std::optional<EpochEndOffset> mine = local.end_offset_for(leader.epoch);
  if (!mine) {
    // Our cache cannot place the leader's epoch (empty, or the leader's
    // epoch is above our latest): the leader's offset is safe to cut to
    // (KIP-101 behaviour).
    return {std::min(leader.end_offset, local_log_end), true};
  }
  if (mine->epoch != leader.epoch) {
    // We never had the leader's epoch: cut to the end of our largest epoch
    // below it and ask again (KIP-279, KAFKA-6361).
    return {std::min(mine->end_offset, local_log_end), false};
  }
  return {std::min({mine->end_offset, leader.end_offset, local_log_end}), true};
}

std::optional<Truncation> out_of_range_truncation(Offset leader_log_start, Offset leader_log_end,
                                                  Offset local_log_end) {
  if (leader_log_end < local_log_end) return Truncation{leader_log_end, false};
  if (leader_log_start > local_log_end) return Truncation{leader_log_start, true};
  return std::nullopt;
}

}  // namespace samsa::replication

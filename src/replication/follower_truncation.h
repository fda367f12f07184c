#pragma once
// Where a follower truncates its log, from the leader's (epoch, end offset)
// answer: Fetch's DivergingEpoch or OffsetForLeaderEpoch (KIP-101, KIP-279,
// KIP-320). Kafka's AbstractFetcherThread.getOffsetTruncationState
// (REPLICATION.md A11). Pure functions.

#include <optional>

#include "model/ids.h"
#include "replication/replication_types.h"

namespace samsa::replication {

struct TruncationTarget {
  Offset offset;
  // false: the follower did not know the epoch the leader answered with; it
  // cut to the end of its own largest epoch below that and must ask again
  // (with Fetch: its next fetch carries its new latest epoch). KIP-279.
  bool completed = true;
  bool operator==(const TruncationTarget&) const = default;
};

// `leader` is the leader's answer for the follower's last fetched epoch;
// `local` the follower's epoch cache; `local_log_end` / `local_high_watermark`
// its log end and high watermark. The result is never above local_log_end.
TruncationTarget truncation_target(const EpochEndOffset& leader, const LeaderEpochLookup& local, Offset local_log_end,
                                   Offset local_high_watermark);

// The follower's fetch was OFFSET_OUT_OF_RANGE (AbstractFetcherThread
// .fetchOffsetAndTruncate): if the leader's log ends below ours (only after
// an unclean election) cut to the leader's end; if ours ends below the
// leader's log start, restart empty at the leader's start; else nothing.
std::optional<Truncation> out_of_range_truncation(Offset leader_log_start, Offset leader_log_end,
                                                  Offset local_log_end);

}  // namespace samsa::replication

// ReplicationCore, the follower's rules: where to fetch, contiguous
// appends, the HW from the leader, truncation (REPLICATION.md A2, A5, A11;
// Kafka's AbstractFetcherThread / ReplicaFetcherThread).
#include <algorithm>

#include "base/assert.h"
#include "replication/follower_truncation.h"
#include "replication/replication_core.h"

namespace samsa::replication {

FetchPosition ReplicationCore::fetch_position(const LeaderEpochLookup& local) const {
  ASSERT(role_ == Role::kFollower);
  return FetchPosition{leader_, leader_epoch_, log_end_, local.latest_epoch()};
}

// The follower appends the leader's batches as they are, exactly at its log
// end (ReplicaFetcherThread checks FetchOffset == log end before appending).
void ReplicationCore::on_follower_append(Offset first_offset, Offset new_log_end, LeaderEpoch last_batch_epoch) {
  ASSERT_MSG(role_ == Role::kFollower, "only a follower appends the leader's batches");
  ASSERT_MSG(first_offset == log_end_, "follower appends are contiguous");
  ASSERT(new_log_end > first_offset);
  ASSERT_MSG(last_batch_epoch <= leader_epoch_, "no batch from an epoch newer than the leader's");
  log_end_ = new_log_end;
  check_invariants();
}

// UnifiedLog.maybeUpdateHighWatermark: the leader's HW clamped to our log
// end. It may go down (across a leader change the new leader's HW can lag).
void ReplicationCore::on_leader_high_watermark(Offset leader_high_watermark) {
  ASSERT(role_ == Role::kFollower);
  Offset hw = std::clamp(leader_high_watermark, Offset(0), log_end_);
  if (hw != high_watermark_) {
    high_watermark_ = hw;
    ready_.high_watermark = hw;
  }
  check_invariants();
}

void ReplicationCore::on_diverging_epoch(const EpochEndOffset& leader, const LeaderEpochLookup& local) {
  ASSERT(role_ == Role::kFollower);
  TruncationTarget target = truncation_target(leader, local, log_end_, high_watermark_);
  // Not completed: the next fetch carries our new latest epoch and the
  // leader checks again (KIP-279's iteration over Fetch). At our log end
  // too: the log then drops an epoch we started and never appended to
  // (Log::truncate_to), else the same divergence comes back every fetch.
  if (target.offset <= log_end_) truncate_to(Truncation{target.offset, false});
  check_invariants();
}

void ReplicationCore::on_fetch_out_of_range(Offset leader_log_start, Offset leader_log_end) {
  ASSERT(role_ == Role::kFollower);
  if (std::optional<Truncation> t = out_of_range_truncation(leader_log_start, leader_log_end, log_end_)) {
    truncate_to(*t);
  }
  check_invariants();
}

}  // namespace samsa::replication

#pragma once
// MemoryLog: a replica's log for the replication core's tests — the leader
// epoch of every offset and a leader-epoch cache kept as Kafka keeps it
// (assigned on a new epoch's first append or at election, truncated with
// the log). Test-only.

#include <vector>

#include "base/assert.h"
#include "replication/replication_types.h"

namespace samsa::replication {

class MemoryLog final : public LeaderEpochLookup {
 public:
  Offset end() const { return Offset(int64_t(epochs_.size())); }
  LeaderEpoch epoch_at(Offset o) const { return epochs_.at(size_t(o.value())); }
  const std::vector<LeaderEpoch>& epochs() const { return epochs_; }
  const std::vector<EpochStart>& cache() const { return cache_; }

  // A leader's append of n records in epoch e.
  void append(LeaderEpoch e, int n) {
    for (int i = 0; i < n; ++i) {
      assign(e, end());
      epochs_.push_back(e);
    }
  }
  // A follower's copy of [from, to) of the leader's log, epochs as they are.
  void copy_from(const MemoryLog& leader, Offset from, Offset to) {
    ASSERT(from == end());
    for (Offset o = from; o < to; ++o) {
      assign(leader.epoch_at(o), end());
      epochs_.push_back(leader.epoch_at(o));
    }
  }
  // LeaderEpochFileCache.assign: only a newer epoch starts an entry.
  void assign(LeaderEpoch e, Offset start) {
    if (!cache_.empty() && e <= cache_.back().epoch) return;
    cache_.push_back({e, start});
  }
  // truncateFromEnd: entries starting at or after `to` go.
  // Also at the end (Kafka's UnifiedLog.truncateTo): an epoch assigned at
  // election and never appended to goes.
  void truncate(Offset to) {
    if (to < end()) epochs_.resize(size_t(to.value()));
    std::erase_if(cache_, [&](const EpochStart& s) { return s.start_offset >= to; });
  }

  std::optional<EpochEndOffset> end_offset_for(LeaderEpoch epoch) const override {
    return end_offset_for_epoch(cache_, epoch, end());
  }
  std::optional<LeaderEpoch> latest_epoch() const override {
    if (cache_.empty()) return std::nullopt;
    return cache_.back().epoch;
  }

 private:
  std::vector<LeaderEpoch> epochs_;
  std::vector<EpochStart> cache_;
};

}  // namespace samsa::replication

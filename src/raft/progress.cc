#include "raft/progress.h"

#include <algorithm>

#include "base/assert.h"

namespace samsa::raft {

bool Progress::paused() const {
  switch (state_) {
    case State::kProbe: return probe_sent_;
    case State::kReplicate: return inflight_.size() >= max_inflight_;
    case State::kSnapshot: return true;
  }
  return true;
}

bool Progress::maybe_update(LogIndex index) {
  bool updated = false;
  if (index > match_) {
    match_ = index;
    updated = true;
    probe_sent_ = false;
  }
  next_ = std::max(next_, index + 1);
  free_inflight_upto(index);
  ASSERT(match_ < next_);
  return updated;
}

bool Progress::maybe_decrease(LogIndex rejected, LogIndex hint) {
  if (state_ == State::kReplicate) {
    if (rejected <= match_) return false;  // stale: already matched past it
    next_ = match_ + 1;  // restart from what we know; probing takes over
    return true;
  }
  if (rejected != next_ - 1) return false;  // answer to an older probe
  next_ = std::max(std::min(rejected, hint + 1), match_ + 1);
  probe_sent_ = false;
  ASSERT(match_ < next_);
  return true;
}

void Progress::sent_append(LogIndex last, bool had_entries) {
  if (state_ == State::kReplicate) {
    if (had_entries) {
      next_ = last + 1;
      inflight_.push_back(last);
    }
  } else if (state_ == State::kProbe) {
    probe_sent_ = true;
  }
}

void Progress::become_probe() {
  if (state_ == State::kSnapshot) {
    next_ = std::max(match_ + 1, pending_snapshot_ + 1);
    pending_snapshot_ = kNoIndex;
  } else {
    next_ = match_ + 1;
  }
  state_ = State::kProbe;
  probe_sent_ = false;
  inflight_.clear();
}

void Progress::become_replicate() {
  state_ = State::kReplicate;
  next_ = match_ + 1;
  probe_sent_ = false;
  inflight_.clear();
}

void Progress::become_snapshot(LogIndex index) {
  state_ = State::kSnapshot;
  pending_snapshot_ = index;
  inflight_.clear();
}

void Progress::free_inflight_upto(LogIndex index) {
  while (!inflight_.empty() && inflight_.front() <= index) inflight_.pop_front();
}

}  // namespace samsa::raft

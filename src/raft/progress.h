#pragma once
// Progress: what a leader knows about one follower's log, and how much it may
// send it. Three states (as in etcd-raft):
//   kProbe:     we don't know where the logs diverge; one Append at a time,
//               next backs off on each rejection.
//   kReplicate: logs agree up to match; stream Appends optimistically, at most
//               max_inflight of them unacknowledged (bounded in-flight data).
//   kSnapshot:  the entries it needs are compacted away; a snapshot is on its
//               way and nothing else is sent until it is acknowledged.
// Invariant: match < next.

#include <cstddef>
#include <deque>

#include "raft/types.h"

namespace samsa::raft {

class Progress {
 public:
  enum class State { kProbe, kReplicate, kSnapshot };

  Progress() = default;
  Progress(LogIndex next, size_t max_inflight) : next_(next), max_inflight_(max_inflight) {}

  State state() const { return state_; }
  LogIndex match() const { return match_; }
  LogIndex next() const { return next_; }
  LogIndex pending_snapshot() const { return pending_snapshot_; }
  bool recent_active() const { return recent_active_; }
  void set_recent_active(bool v) { recent_active_ = v; }

  // May we send it an Append now?
  bool paused() const;
  // An acknowledgement up to `index`. False if it told us nothing new.
  bool maybe_update(LogIndex index);
  // A rejection of the Append whose prev index was `rejected`; `hint` is the
  // follower's last index. False if the rejection is stale.
  bool maybe_decrease(LogIndex rejected, LogIndex hint);
  // We sent entries up to `last` (kReplicate) or a probe (kProbe).
  void sent_append(LogIndex last, bool had_entries);

  void become_probe();
  void become_replicate();
  void become_snapshot(LogIndex index);
  void unpause() { probe_sent_ = false; }

 private:
  void free_inflight_upto(LogIndex index);

  State state_ = State::kProbe;
  LogIndex match_;
  LogIndex next_{1};
  LogIndex pending_snapshot_;
  bool probe_sent_ = false;
  bool recent_active_ = false;
  size_t max_inflight_ = 1;
  std::deque<LogIndex> inflight_;  // last index of each unacknowledged Append
};

}  // namespace samsa::raft

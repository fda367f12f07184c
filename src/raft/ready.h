#pragma once
// Ready: the batch of work a RaftNode hands to its caller (RaftNode::take_ready).
//
// Ordering rules — the caller performs a Ready completely, in this order,
// before it feeds the node its next input:
//   1. Persist, in order: `snapshot` (if set), then `entries`, then
//      `hard_state` (if set); then fsync. Storage rules:
//        - snapshot: keep the stored entries after snapshot->index only if the
//          stored entry at snapshot->index has term snapshot->term (a local
//          compaction); otherwise discard every stored entry (an installed
//          snapshot from the leader replaces a divergent log).
//        - entries: discard every stored entry with index >= entries.front().index,
//          then append. Entries are contiguous.
//   2. Only after the fsync: send `messages`. A vote grant or an append
//      acknowledgement promises that the state behind it is durable.
//   3. Only after the fsync: apply. If `apply_snapshot`, restore the state
//      machine from `snapshot` first; then apply `committed` in order.
// A crash at any point is allowed: what was not fsynced may be lost, and
// nothing of steps 2-3 happened. Nothing in a Ready may be reordered across
// Readies.

#include <optional>
#include <vector>

#include "raft/message.h"
#include "raft/types.h"

namespace samsa::raft {

struct Ready {
  SnapshotPtr snapshot;
  std::vector<Entry> entries;
  std::optional<HardState> hard_state;
  std::vector<Message> messages;
  bool apply_snapshot = false;
  std::vector<Entry> committed;

  bool empty() const {
    return !snapshot && entries.empty() && !hard_state && messages.empty() && committed.empty();
  }
};

}  // namespace samsa::raft

#pragma once
// RaftStorage: where a RaftNode's durable state lives — the log of entries,
// the latest snapshot and the hard state — behind an interface, so that raft/
// stays pure (no files here) while the driver persists each Ready through an
// implementation (controller/raft_log_storage.h: the metadata log dir on a
// FileSystem; the simulator's own SimDisk keeps the same rules in memory).
//
// The storage rules are ready.h's, and persist_ready() applies them in its
// order: snapshot, then entries, then hard state, then one sync(). Nothing
// written before sync() returned ok is promised to survive a crash; what
// sync() covered must (the driver sends and applies only after it).
//
// load() after a crash returns a state from which the node may restart: the
// snapshot, the contiguous entries after it, the hard state; it repeats the
// storage rules for an operation a crash interrupted (e.g. a snapshot file
// written but the log not yet truncated), so every prefix of the operations
// recovers to a state some prefix of the Readies would have produced.
//
// Errors are storage failures: the node must stop (Kafka's raft client halts
// on a log or quorum-state write failure); nothing is retried here.

#include <span>

#include "base/result.h"
#include "raft/ready.h"
#include "raft/types.h"

namespace samsa::raft {

class RaftStorage {
 public:
  virtual ~RaftStorage() = default;

  // What the disk holds (empty on a first start).
  virtual Result<PersistentState> load() = 0;

  // ready.h's snapshot rule: keep the stored entries after snapshot.index
  // only if the stored entry at that index (or the stored snapshot, when it
  // ends there) has snapshot.term; otherwise discard every stored entry.
  // A snapshot at or below the stored one is ignored.
  virtual Status install_snapshot(const SnapshotPtr& snapshot) = 0;
  // ready.h's entries rule: discard every stored entry with index >=
  // entries.front().index, then append. `entries` is contiguous, non-empty,
  // and starts at most one past the last stored index.
  virtual Status append(std::span<const Entry> entries) = 0;
  virtual Status save_hard_state(const HardState& state) = 0;
  // Makes everything above durable.
  virtual Status sync() = 0;
};

// Step 1 of ready.h: the Ready's snapshot, entries and hard state, in that
// order, then sync(). The first failure stops it (and is returned).
Status persist_ready(RaftStorage& storage, const Ready& ready);

}  // namespace samsa::raft

#pragma once
// RaftLog: a node's in-memory view of its log — an optional snapshot prefix
// (index, term) followed by contiguous entries — plus the commit and applied
// indexes. Owned by one RaftNode; no I/O (the caller persists via Ready).
//
// Invariants (ASSERTed): entries are contiguous and start at
// snapshot_index + 1; terms never decrease along the log;
// snapshot_index <= applied <= commit <= last_index; nothing at or below
// commit is ever truncated.

#include <optional>
#include <span>
#include <vector>

#include "raft/types.h"

namespace samsa::raft {

class RaftLog {
 public:
  RaftLog() = default;
  // Rebuild from disk: the snapshot (may be null), the entries after it, the commit.
  void restore(const SnapshotPtr& snapshot, std::vector<Entry> entries, LogIndex commit);

  LogIndex snapshot_index() const { return snapshot_index_; }
  Term snapshot_term() const { return snapshot_term_; }
  LogIndex first_index() const { return snapshot_index_ + 1; }
  LogIndex last_index() const { return snapshot_index_ + int64_t(entries_.size()); }
  Term last_term() const;
  LogIndex commit() const { return commit_; }
  LogIndex applied() const { return applied_; }

  // Term of the entry at `index`; nullopt when it is compacted away or past the end.
  std::optional<Term> term_at(LogIndex index) const;
  bool matches(LogIndex index, Term term) const;
  // Raft §5.4.1: is a log ending at (last_index, last_term) at least as up to date as ours?
  bool candidate_up_to_date(LogIndex last_index, Term last_term) const;
  const Entry& at(LogIndex index) const;

  // Follower append after a successful (prev_index, prev_term) match: skips
  // entries we already have, truncates our suffix at the first conflict, and
  // appends the rest. Returns the first index that changed (or kNoIndex).
  LogIndex append_after_match(LogIndex prev_index, std::span<const Entry> entries);
  // Leader append of its own new entry.
  void append(Entry entry);
  // An observer told its suffix diverges from the leader's (RaftObserver):
  // drop every entry after `index` (never a committed one; index >= the
  // snapshot's).
  void truncate_after(LogIndex index);

  // Entries [lo, hi], at most max_count of them.
  std::vector<Entry> slice(LogIndex lo, LogIndex hi, size_t max_count) const;

  void commit_to(LogIndex index);  // never moves backwards
  void applied_to(LogIndex index);

  // Local compaction: drop entries <= index (index <= applied).
  void compact(LogIndex index);
  // Replace everything by a snapshot from the leader (commit = applied = index).
  void reset_to_snapshot(LogIndex index, Term term);

 private:
  void check_invariants() const;

  LogIndex snapshot_index_;
  Term snapshot_term_;
  std::vector<Entry> entries_;
  LogIndex commit_;
  LogIndex applied_;
};

}  // namespace samsa::raft

#include "raft/raft_log.h"

#include "base/assert.h"

namespace samsa::raft {

void RaftLog::restore(const SnapshotPtr& snapshot, std::vector<Entry> entries, LogIndex commit) {
  snapshot_index_ = snapshot ? snapshot->index : kNoIndex;
  snapshot_term_ = snapshot ? snapshot->term : kNoTerm;
  entries_ = std::move(entries);
  applied_ = snapshot_index_;
  // A commit index recorded on disk is only trusted as far as the log reaches.
  commit_ = std::max(snapshot_index_, std::min(commit, last_index()));
  check_invariants();
}

Term RaftLog::last_term() const { return entries_.empty() ? snapshot_term_ : entries_.back().term; }

std::optional<Term> RaftLog::term_at(LogIndex index) const {
  if (index == snapshot_index_) return snapshot_term_;
  if (index < snapshot_index_ || index > last_index()) return std::nullopt;
  return entries_[size_t(index - first_index())].term;
}

bool RaftLog::matches(LogIndex index, Term term) const {
  auto t = term_at(index);
  return t && *t == term;
}

bool RaftLog::candidate_up_to_date(LogIndex index, Term term) const {
  return term > last_term() || (term == last_term() && index >= last_index());
}

const Entry& RaftLog::at(LogIndex index) const {
  ASSERT(index >= first_index() && index <= last_index());
  return entries_[size_t(index - first_index())];
}

LogIndex RaftLog::append_after_match(LogIndex prev_index, std::span<const Entry> entries) {
  ASSERT(prev_index >= snapshot_index_ && prev_index <= last_index());
  LogIndex changed = kNoIndex;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    ASSERT(e.index == prev_index + int64_t(i) + 1);
    if (e.index <= last_index()) {
      if (at(e.index).term == e.term) continue;  // already have it
      // Conflict: the suffix from here came from a deposed leader. It can
      // never be committed, or log matching / leader completeness is broken.
      ASSERT_MSG(e.index > commit_, "truncating a committed entry");
      entries_.resize(size_t(e.index - first_index()));
    }
    if (changed == kNoIndex) changed = e.index;
    ASSERT(entries_.empty() ? e.index == first_index() : e.index == entries_.back().index + 1);
    ASSERT(e.term >= last_term());
    entries_.push_back(e);
  }
  return changed;
}

void RaftLog::append(Entry entry) {
  ASSERT(entry.index == last_index() + 1);
  ASSERT(entry.term >= last_term());
  entries_.push_back(std::move(entry));
}

void RaftLog::truncate_after(LogIndex index) {
  if (index >= last_index()) return;
  ASSERT_MSG(index >= commit_, "truncating a committed entry");
  ASSERT(index >= snapshot_index_);
  entries_.resize(size_t(index - snapshot_index_));
}

std::vector<Entry> RaftLog::slice(LogIndex lo, LogIndex hi, size_t max_count) const {
  std::vector<Entry> out;
  ASSERT(lo >= first_index());
  for (LogIndex i = lo; i <= hi && i <= last_index() && out.size() < max_count; ++i) out.push_back(at(i));
  return out;
}

void RaftLog::commit_to(LogIndex index) {
  if (index <= commit_) return;
  ASSERT_MSG(index <= last_index(), "commit beyond the end of the log");
  commit_ = index;
}

void RaftLog::applied_to(LogIndex index) {
  ASSERT(index >= applied_ && index <= commit_);
  applied_ = index;
}

void RaftLog::compact(LogIndex index) {
  if (index <= snapshot_index_) return;
  ASSERT_MSG(index <= applied_, "compacting past what the state machine applied");
  Term term = *term_at(index);
  entries_.erase(entries_.begin(), entries_.begin() + (index - first_index() + 1));
  snapshot_index_ = index;
  snapshot_term_ = term;
  check_invariants();
}

void RaftLog::reset_to_snapshot(LogIndex index, Term term) {
  ASSERT(index > commit_);
  entries_.clear();
  snapshot_index_ = index;
  snapshot_term_ = term;
  commit_ = index;
  applied_ = index;
  check_invariants();
}

void RaftLog::check_invariants() const {
  ASSERT(snapshot_index_ <= applied_ && applied_ <= commit_ && commit_ <= last_index());
  Term prev = snapshot_term_;
  for (size_t i = 0; i < entries_.size(); ++i) {
    ASSERT(entries_[i].index == first_index() + int64_t(i));
    ASSERT(entries_[i].term >= prev);
    prev = entries_[i].term;
  }
}

}  // namespace samsa::raft

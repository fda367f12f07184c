#include "raft/raft_log.h"

#include <gtest/gtest.h>

namespace samsa::raft {
namespace {

Entry e(int64_t index, int64_t term) { return Entry{Term(term), LogIndex(index), EntryKind::kNormal, {}}; }

TEST(RaftLog, EmptyLogHasSentinel) {
  RaftLog log;
  EXPECT_EQ(log.last_index(), kNoIndex);
  EXPECT_EQ(log.last_term(), kNoTerm);
  EXPECT_TRUE(log.matches(kNoIndex, kNoTerm));
  EXPECT_FALSE(log.term_at(LogIndex(1)).has_value());
}

TEST(RaftLog, AppendAfterMatchTruncatesConflictingSuffix) {
  RaftLog log;
  std::vector<Entry> first{e(1, 1), e(2, 1), e(3, 1)};
  EXPECT_EQ(log.append_after_match(kNoIndex, first), LogIndex(1));
  // Same entries again: nothing changes.
  EXPECT_EQ(log.append_after_match(kNoIndex, first), kNoIndex);
  // A new leader's entries conflict at index 2.
  std::vector<Entry> second{e(2, 2)};
  EXPECT_EQ(log.append_after_match(LogIndex(1), second), LogIndex(2));
  EXPECT_EQ(log.last_index(), LogIndex(2));
  EXPECT_EQ(log.term_at(LogIndex(2)), Term(2));
}

TEST(RaftLog, StaleShorterAppendKeepsLaterEntries) {
  RaftLog log;
  std::vector<Entry> all{e(1, 1), e(2, 1), e(3, 1)};
  log.append_after_match(kNoIndex, all);
  std::vector<Entry> prefix{e(1, 1)};
  log.append_after_match(kNoIndex, prefix);  // a delayed, older append
  EXPECT_EQ(log.last_index(), LogIndex(3));
}

TEST(RaftLog, UpToDateComparesLastTermThenIndex) {
  RaftLog log;
  std::vector<Entry> entries{e(1, 1), e(2, 2)};
  log.append_after_match(kNoIndex, entries);
  EXPECT_TRUE(log.candidate_up_to_date(LogIndex(2), Term(2)));
  EXPECT_TRUE(log.candidate_up_to_date(LogIndex(1), Term(3)));
  EXPECT_FALSE(log.candidate_up_to_date(LogIndex(5), Term(1)));
  EXPECT_FALSE(log.candidate_up_to_date(LogIndex(1), Term(2)));
}

TEST(RaftLog, CompactKeepsSuffixAndTerm) {
  RaftLog log;
  std::vector<Entry> entries{e(1, 1), e(2, 1), e(3, 2)};
  log.append_after_match(kNoIndex, entries);
  log.commit_to(LogIndex(3));
  log.applied_to(LogIndex(2));
  log.compact(LogIndex(2));
  EXPECT_EQ(log.first_index(), LogIndex(3));
  EXPECT_EQ(log.term_at(LogIndex(2)), Term(1));
  EXPECT_FALSE(log.term_at(LogIndex(1)).has_value());
  EXPECT_EQ(log.last_term(), Term(2));
}

TEST(RaftLogDeathTest, NeverTruncatesCommittedEntries) {
  RaftLog log;
  std::vector<Entry> entries{e(1, 1), e(2, 1)};
  log.append_after_match(kNoIndex, entries);
  log.commit_to(LogIndex(2));
  std::vector<Entry> conflicting{e(2, 2)};
  EXPECT_DEATH(log.append_after_match(LogIndex(1), conflicting), "truncating a committed entry");
}

TEST(RaftLogDeathTest, CommitBeyondLastIndexAsserts) {
  RaftLog log;
  EXPECT_DEATH(log.commit_to(LogIndex(1)), "commit beyond the end");
}

}  // namespace
}  // namespace samsa::raft

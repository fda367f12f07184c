// GroupHistory's rules, each shown with a history that breaks it and one
// that does not (docs/testing.md, "What the broker promises").
#include "testing/group_history.h"

#include <gtest/gtest.h>

namespace samsa::sim {
namespace {

using Kind = Violation::Kind;
constexpr const char* kKey = "g/t-0";

std::vector<Kind> kinds(const GroupHistory& h) {
  std::vector<Kind> out;
  for (const auto& v : h.violations()) out.push_back(v.kind);
  return out;
}

TEST(GroupHistory, AnAcknowledgedCommitIsWhatOffsetFetchReturns) {
  GroupHistory h(false);
  EXPECT_EQ(h.fetch_floor(kKey), -1);
  h.fetched(kKey, h.fetch_floor(kKey), -1, "");  // nothing committed yet
  h.commit_sent(kKey, 5, "m0");
  h.commit_acknowledged(kKey, "m0");
  h.fetched(kKey, h.fetch_floor(kKey), 5, "m0");
  EXPECT_TRUE(h.violations().empty());
  EXPECT_EQ(h.acknowledged_commits(), 1u);
}

TEST(GroupHistory, AnOffsetNeverCommittedIsInvented) {
  GroupHistory h(false);
  h.commit_sent(kKey, 5, "m0");
  h.fetched(kKey, -1, 6, "m0");  // the metadata of one commit, the offset of none
  h.fetched(kKey, -1, 5, "m9");
  EXPECT_EQ(kinds(h), (std::vector<Kind>{Kind::kGroupOffsetInvented, Kind::kGroupOffsetInvented}));
}

TEST(GroupHistory, ACommitWhoseAnswerWasLostMayOrMayNotBeThere) {
  GroupHistory h(false);
  h.commit_sent(kKey, 5, "m0");
  h.commit_acknowledged(kKey, "m0");
  h.commit_sent(kKey, 7, "m1");  // no answer
  h.fetched(kKey, h.fetch_floor(kKey), 5, "m0");
  h.fetched(kKey, h.fetch_floor(kKey), 7, "m1");
  EXPECT_TRUE(h.violations().empty());
  // Seen once, it must stay.
  h.fetched(kKey, h.fetch_floor(kKey), 5, "m0");
  EXPECT_EQ(kinds(h), std::vector<Kind>{Kind::kGroupOffsetLost});
}

TEST(GroupHistory, AnAnswerIsJudgedByWhatWasKnownWhenTheFetchLeft) {
  GroupHistory h(false);
  h.commit_sent(kKey, 5, "m0");
  int64_t floor = h.fetch_floor(kKey);
  h.commit_acknowledged(kKey, "m0");  // the fetch may have been served before the commit
  h.fetched(kKey, floor, -1, "");
  EXPECT_TRUE(h.violations().empty());
}

TEST(GroupHistory, AProcessCrashKeepsEveryAcknowledgedCommit) {
  GroupHistory h(false);
  h.commit_sent(kKey, 5, "m0");
  h.commit_acknowledged(kKey, "m0");
  h.crashed(CrashKind::kProcess);
  h.fetched(kKey, h.fetch_floor(kKey), -1, "");
  EXPECT_EQ(kinds(h), std::vector<Kind>{Kind::kGroupOffsetLost});
}

TEST(GroupHistory, APowerLossWithFsyncPerMessageKeepsAcknowledgedCommitsOnly) {
  GroupHistory h(true);
  h.commit_sent(kKey, 5, "m0");
  h.commit_acknowledged(kKey, "m0");
  h.commit_sent(kKey, 7, "m1");
  h.fetched(kKey, h.fetch_floor(kKey), 7, "m1");  // seen, never acknowledged
  h.crashed(CrashKind::kPowerLoss);
  h.fetched(kKey, h.fetch_floor(kKey), 5, "m0");
  EXPECT_TRUE(h.violations().empty());
  h.crashed(CrashKind::kPowerLoss);
  h.fetched(kKey, h.fetch_floor(kKey), -1, "");
  EXPECT_EQ(kinds(h), std::vector<Kind>{Kind::kGroupOffsetLost});
}

TEST(GroupHistory, APowerLossWithoutFsyncMayLoseCommitsButNeverInventsOne) {
  GroupHistory h(false);
  h.commit_sent(kKey, 5, "m0");
  h.commit_acknowledged(kKey, "m0");
  h.commit_sent(kKey, 7, "m1");
  h.commit_acknowledged(kKey, "m1");
  h.crashed(CrashKind::kPowerLoss);
  h.fetched(kKey, h.fetch_floor(kKey), 5, "m0");  // the last commit lost: a new era
  EXPECT_TRUE(h.violations().empty());
  h.fetched(kKey, h.fetch_floor(kKey), 3, "m0");
  EXPECT_EQ(kinds(h), std::vector<Kind>{Kind::kGroupOffsetInvented});
}

}  // namespace
}  // namespace samsa::sim

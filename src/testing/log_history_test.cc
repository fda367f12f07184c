// LogHistory's rules, each shown with a history that breaks it and one that
// does not (docs/testing.md, "What the broker promises").
#include "testing/log_history.h"

#include <gtest/gtest.h>

namespace samsa::sim {
namespace {

using Kind = Violation::Kind;

std::vector<Kind> kinds(const LogHistory& h) {
  std::vector<Kind> out;
  for (const auto& v : h.violations()) out.push_back(v.kind);
  return out;
}

std::vector<ReadRecord> log_of(std::vector<std::string> values, int64_t base = 0) {
  std::vector<ReadRecord> out;
  for (auto& v : values) out.push_back({base++, std::move(v)});
  return out;
}

TEST(LogHistory, AcknowledgedThenReadIsClean) {
  LogHistory h(false);
  h.sent("t-0", {"a", "b"});
  h.acknowledged("t-0", 0, {"a", "b"});
  h.fetched("t-0", 0, 2, log_of({"a", "b"}));
  EXPECT_TRUE(h.ok());
  EXPECT_EQ(h.acknowledged_records(), 2u);
}

TEST(LogHistory, ReadBeforeTheAcknowledgementArrivesIsClean) {
  LogHistory h(false);
  h.sent("t-0", {"a"});
  h.fetched("t-0", 0, 1, log_of({"a"}));
  h.acknowledged("t-0", 0, {"a"});
  EXPECT_TRUE(h.ok());
}

TEST(LogHistory, ValueNobodySentIsInvented) {
  LogHistory h(false);
  h.fetched("t-0", 0, 1, log_of({"ghost"}));
  EXPECT_EQ(kinds(h), std::vector<Kind>{Kind::kInvented});
}

TEST(LogHistory, RecordAtOrAboveTheHighWatermarkIsFlagged) {
  LogHistory h(false);
  h.sent("t-0", {"a", "b"});
  h.fetched("t-0", 0, 1, log_of({"a", "b"}));
  EXPECT_EQ(kinds(h), std::vector<Kind>{Kind::kAboveHighWatermark});
}

TEST(LogHistory, HoleInAFetchIsAGap) {
  LogHistory h(false);
  h.sent("t-0", {"a", "b"});
  h.fetched("t-0", 0, 5, {{0, "a"}, {2, "b"}});
  EXPECT_EQ(kinds(h), std::vector<Kind>{Kind::kGap});
}

TEST(LogHistory, RecordsBelowTheFetchOffsetAreSkippedNotJudged) {
  LogHistory h(false);
  h.sent("t-0", {"a", "b", "c"});
  h.fetched("t-0", 1, 3, log_of({"a", "b", "c"}));  // a batch starting before the fetch offset
  EXPECT_TRUE(h.ok());
}

TEST(LogHistory, TwoValuesAtOneOffsetAreInconsistent) {
  LogHistory h(false);
  h.sent("t-0", {"a", "b"});
  h.acknowledged("t-0", 0, {"a"});
  h.fetched("t-0", 0, 1, log_of({"b"}));
  EXPECT_EQ(kinds(h), std::vector<Kind>{Kind::kInconsistent});
}

TEST(LogHistory, OneValueAtTwoOffsetsIsADuplicate) {
  LogHistory h(false);
  h.sent("t-0", {"a"});
  h.acknowledged("t-0", 0, {"a"});
  h.acknowledged("t-0", 1, {"a"});
  EXPECT_EQ(kinds(h), std::vector<Kind>{Kind::kDuplicate});
}

TEST(LogHistory, ProcessCrashMustKeepEveryAcknowledgedRecord) {
  LogHistory h(false);
  h.sent("t-0", {"a", "b"});
  h.acknowledged("t-0", 0, {"a", "b"});
  h.crashed(CrashKind::kProcess);
  h.recovered("t-0", log_of({"a"}));
  EXPECT_EQ(kinds(h), std::vector<Kind>{Kind::kLostAcknowledged});
}

TEST(LogHistory, PowerLossMayLoseASuffixWithoutFsync) {
  LogHistory h(false);
  h.sent("t-0", {"a", "b", "c"});
  h.acknowledged("t-0", 0, {"a", "b"});
  h.fetched("t-0", 0, 2, log_of({"a", "b"}));
  h.crashed(CrashKind::kPowerLoss);
  h.recovered("t-0", log_of({"a"}));
  h.resumed();
  EXPECT_TRUE(h.ok());
  EXPECT_EQ(h.lost_allowed(), 1u);
  // A new era: offset 1 is assigned again, and the watermark may have gone down.
  h.acknowledged("t-0", 1, {"c"});
  h.fetched("t-0", 0, 2, log_of({"a", "c"}));
  EXPECT_TRUE(h.ok()) << h.violations().front().detail;
}

TEST(LogHistory, PowerLossMustKeepEverythingWithFsyncPerMessage) {
  LogHistory h(true);
  h.sent("t-0", {"a", "b"});
  h.acknowledged("t-0", 0, {"a", "b"});
  h.crashed(CrashKind::kPowerLoss);
  h.recovered("t-0", log_of({"a"}));
  EXPECT_EQ(kinds(h), std::vector<Kind>{Kind::kLostAcknowledged});
}

TEST(LogHistory, PowerLossMustNotLeaveAHole) {
  // The tail of one segment lost while the next segment survived: what is
  // left is not a prefix.
  LogHistory h(false);
  h.sent("t-0", {"a", "b", "c"});
  h.acknowledged("t-0", 0, {"a", "b", "c"});
  h.crashed(CrashKind::kPowerLoss);
  h.recovered("t-0", {{0, "a"}, {2, "c"}});
  EXPECT_EQ(kinds(h), std::vector<Kind>{Kind::kGap});
}

TEST(LogHistory, PowerLossMustNotChangeWhatSurvived) {
  LogHistory h(false);
  h.sent("t-0", {"a", "b", "x"});
  h.acknowledged("t-0", 0, {"a", "b"});
  h.crashed(CrashKind::kPowerLoss);
  h.recovered("t-0", log_of({"a", "x"}));
  EXPECT_EQ(kinds(h), std::vector<Kind>{Kind::kInconsistent});
}

TEST(LogHistory, WatermarkGoingDownWithoutPowerLossIsFlagged) {
  LogHistory h(false);
  h.sent("t-0", {"a", "b"});
  h.acknowledged("t-0", 0, {"a", "b"});
  h.fetched("t-0", 0, 2, log_of({"a", "b"}));
  h.crashed(CrashKind::kProcess);
  h.recovered("t-0", log_of({"a", "b"}));
  h.resumed();
  h.fetched("t-0", 2, 1, {});
  EXPECT_EQ(kinds(h), std::vector<Kind>{Kind::kWatermarkDecreased});
}

TEST(LogHistory, AConsumerMaySeeTheWatermarkOfWhatSurvivedAPowerLossBeforeTheReadBack) {
  LogHistory h(false);
  h.sent("t-0", {"a", "b"});
  h.acknowledged("t-0", 0, {"a", "b"});
  h.fetched("t-0", 0, 2, log_of({"a", "b"}));
  h.crashed(CrashKind::kPowerLoss);
  h.fetched("t-0", 0, 1, log_of({"a"}));  // a consumer polling on, before the read-back
  EXPECT_TRUE(h.ok());
  h.recovered("t-0", log_of({"a"}));
  h.resumed();
  h.fetched("t-0", 1, 0, {});  // after the read-back: below what survived
  EXPECT_EQ(kinds(h), std::vector<Kind>{Kind::kWatermarkDecreased});
}

TEST(LogHistory, WithFsyncPerMessageAPowerLossMayNotLowerTheWatermark) {
  LogHistory h(true);
  h.sent("t-0", {"a", "b"});
  h.acknowledged("t-0", 0, {"a", "b"});
  h.fetched("t-0", 0, 2, log_of({"a", "b"}));
  h.crashed(CrashKind::kPowerLoss);
  h.fetched("t-0", 0, 1, log_of({"a"}));
  EXPECT_EQ(kinds(h), std::vector<Kind>{Kind::kWatermarkDecreased});
}

TEST(LogHistory, TheWorseOfTwoCrashesDecides) {
  LogHistory h(false);
  h.sent("t-0", {"a", "b"});
  h.acknowledged("t-0", 0, {"a", "b"});
  h.crashed(CrashKind::kPowerLoss);
  h.crashed(CrashKind::kProcess);  // crashed again while restarting
  h.recovered("t-0", log_of({"a"}));
  EXPECT_TRUE(h.ok());
}

TEST(LogHistory, AValueSentToAnotherPartitionIsForeign) {
  LogHistory h(false);
  h.sent("t-0", {"a"});
  h.fetched("t-1", 0, 1, log_of({"a"}));
  EXPECT_EQ(kinds(h), std::vector<Kind>{Kind::kForeign});
}

TEST(LogHistory, ARecreatedTopicMustNotServeWhatTheDeletedOneHeld) {
  LogHistory h(false);
  h.sent("churn-0@1", {"a", "b"});
  h.acknowledged("churn-0@1", 0, {"a"});
  // b's produce had no known outcome: processed after the re-creation, it
  // lands in the new topic (Kafka produces by name).
  h.fetched("churn-0@2", 0, 1, log_of({"b"}));
  EXPECT_TRUE(h.ok());
  h.fetched("churn-0@2", 0, 2, log_of({"b", "a"}));  // a was in the deleted topic's log
  EXPECT_EQ(kinds(h), std::vector<Kind>{Kind::kForeign});
}

TEST(LogHistory, ListOffsetsEarliestIsZeroWithoutRetention) {
  LogHistory h(false);
  h.listed_earliest("t-0", 0);
  EXPECT_TRUE(h.ok());
  h.listed_earliest("t-0", 3);
  EXPECT_EQ(kinds(h), std::vector<Kind>{Kind::kListOffsets});
}

TEST(LogHistory, ListOffsetsLatestReachesWhatWasAcknowledgedWhenItWasSent) {
  LogHistory h(false);
  h.sent("t-0", {"a", "b", "c"});
  int64_t before = h.watermark_floor("t-0");
  h.acknowledged("t-0", 0, {"a", "b"});
  int64_t after = h.watermark_floor("t-0");
  EXPECT_EQ(before, 0);
  EXPECT_EQ(after, 2);
  h.listed_latest("t-0", before, 0);  // sent before the acknowledgement arrived
  EXPECT_TRUE(h.ok());
  h.listed_latest("t-0", after, 1);
  EXPECT_EQ(kinds(h), std::vector<Kind>{Kind::kListOffsets});
}

TEST(LogHistory, ListOffsetsLatestIsAHighWatermark) {
  LogHistory h(false);
  h.sent("t-0", {"a", "b", "c"});
  h.listed_latest("t-0", 0, 3);
  EXPECT_EQ(h.watermark_floor("t-0"), 3);
  h.fetched("t-0", 0, 2, log_of({"a", "b"}), h.watermark_floor("t-0"));
  EXPECT_EQ(kinds(h), std::vector<Kind>{Kind::kWatermarkDecreased});
}

TEST(LogHistory, AFetchAnsweredLateIsJudgedByWhatWasKnownWhenItLeft) {
  LogHistory h(false);
  h.sent("t-0", {"a", "b"});
  int64_t floor = h.watermark_floor("t-0");
  h.fetched("t-0", 0, 2, log_of({"a", "b"}), h.watermark_floor("t-0"));  // another client's, sent later
  h.fetched("t-0", 0, 1, log_of({"a"}), floor);                          // served first, answered last
  EXPECT_TRUE(h.ok());
}

TEST(LogHistory, NoWatermarkIsJudgedBetweenAPowerLossAndTheReadBack) {
  LogHistory h(false);
  h.sent("t-0", {"a", "b"});
  h.acknowledged("t-0", 0, {"a", "b"});
  h.fetched("t-0", 0, 2, log_of({"a", "b"}));
  h.crashed(CrashKind::kPowerLoss);
  EXPECT_EQ(h.watermark_floor("t-0"), 0);
  h.fetched("t-0", 0, 1, log_of({"a"}), 0);  // a consumer's fetch, before the read-back
  h.listed_latest("t-0", 0, 1);
  h.recovered("t-0", log_of({"a"}));
  h.resumed();
  EXPECT_TRUE(h.ok()) << h.violations().front().detail;
}

TEST(LogHistory, AWriteSentAfterAnAckMustLandAboveIt) {
  LogHistory h(false);
  h.sent("t-0", {"a", "b"});  // in flight together: either order is fine
  h.acknowledged("t-0", 1, {"b"});
  h.acknowledged("t-0", 0, {"a"});
  EXPECT_TRUE(h.ok());
  h.sent("t-0", {"c"});  // sent after offset 1 was acknowledged
  h.acknowledged("t-0", 1, {"c"});
  EXPECT_EQ(kinds(h), (std::vector<Kind>{Kind::kInconsistent, Kind::kReordered}));
}

TEST(LogHistory, OffsetsAssignedAgainAfterALossyPowerLossAreNotReordered) {
  LogHistory h(false);
  h.sent("t-0", {"a", "b"});
  h.acknowledged("t-0", 0, {"a", "b"});
  h.crashed(CrashKind::kPowerLoss);
  h.recovered("t-0", log_of({"a"}));  // b lost (allowed: no flush.messages=1)
  h.resumed();
  h.sent("t-0", {"c"});
  h.acknowledged("t-0", 1, {"c"});
  EXPECT_TRUE(h.ok()) << h.violations().front().detail;
}

// An acknowledgement without an offset: once a read places the value, its
// offset is acknowledged like any other (a crash must keep it).
TEST(LogHistory, AValueAcknowledgedSomewhereIsKeptOnceReadAtAnOffset) {
  LogHistory h(false);
  h.sent("t-0", {"a", "b"});
  h.acknowledged_somewhere("t-0", {"a"});
  h.fetched("t-0", 0, 1, log_of({"a"}));
  h.crashed(CrashKind::kProcess);
  h.recovered("t-0", {});
  h.resumed();
  EXPECT_EQ(kinds(h), std::vector<Kind>{Kind::kLostAcknowledged});
}

TEST(LogHistory, AValueAcknowledgedSomewhereMayBeLostByAPowerLossWithoutFsync) {
  LogHistory h(false);
  h.sent("t-0", {"a"});
  h.acknowledged_somewhere("t-0", {"a"});
  h.crashed(CrashKind::kPowerLoss);
  h.recovered("t-0", {});
  EXPECT_TRUE(h.ok());
  EXPECT_EQ(h.lost_allowed(), 1u);
}

}  // namespace
}  // namespace samsa::sim

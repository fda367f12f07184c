// FollowerProgress: Kafka's Replica.scala (updateFetchStateOrThrow,
// resetReplicaState, ReplicaState.isCaughtUp), REPLICATION.md A3.
#include "replication/follower_progress.h"

#include <gtest/gtest.h>

namespace samsa::replication {
namespace {

constexpr int64_t kLag = 30000;

TEST(FollowerProgress, InitialStateIsUnknownAndNeverCaughtUp) {
  FollowerProgress p;
  EXPECT_FALSE(p.log_end());
  EXPECT_FALSE(p.last_caught_up_time_ms());
  EXPECT_FALSE(p.is_caught_up(Offset(5), 0, kLag)) << "never caught up, even at time 0";
}

TEST(FollowerProgress, FetchAtTheLeaderEndIsCaughtUpNow) {
  FollowerProgress p;
  p.on_fetch(Offset(10), Offset(0), 5000, Offset(10), BrokerEpoch(3));
  EXPECT_EQ(p.log_end(), Offset(10));
  EXPECT_EQ(p.last_caught_up_time_ms(), 5000);
  EXPECT_EQ(p.last_fetch_leader_log_end(), Offset(10));
  EXPECT_EQ(p.broker_epoch(), BrokerEpoch(3));
}

TEST(FollowerProgress, ReachingThePreviousLeaderEndCreditsThePreviousFetch) {
  FollowerProgress p;
  p.on_fetch(Offset(5), Offset(0), 1000, Offset(10), kNoBrokerEpoch);  // behind: not caught up
  EXPECT_FALSE(p.last_caught_up_time_ms());
  p.on_fetch(Offset(10), Offset(0), 2000, Offset(15), kNoBrokerEpoch);  // reached 10, leader now at 15
  EXPECT_EQ(p.last_caught_up_time_ms(), 1000) << "caught up as of the fetch at 1000";
  p.on_fetch(Offset(12), Offset(0), 3000, Offset(20), kNoBrokerEpoch);  // short of 15
  EXPECT_EQ(p.last_caught_up_time_ms(), 1000);
  EXPECT_EQ(p.last_fetch_leader_log_end(), Offset(20));
}

TEST(FollowerProgress, CaughtUpByEqualEndOrWithinTheLag) {
  FollowerProgress p;
  p.on_fetch(Offset(10), Offset(0), 1000, Offset(10), kNoBrokerEpoch);
  EXPECT_TRUE(p.is_caught_up(Offset(12), 1000 + kLag, kLag));
  EXPECT_FALSE(p.is_caught_up(Offset(12), 1000 + kLag + 1, kLag));
  EXPECT_TRUE(p.is_caught_up(Offset(10), 1000 + 10 * kLag, kLag)) << "at the leader's end: in sync however old";
}

TEST(FollowerProgress, ResetForANewLeaderForgetsOffsets) {
  FollowerProgress p;
  p.on_fetch(Offset(10), Offset(2), 1000, Offset(10), BrokerEpoch(4));
  p.reset(9000, Offset(10), /*new_leader=*/true, /*in_isr=*/true);
  EXPECT_FALSE(p.log_end());
  EXPECT_FALSE(p.broker_epoch());
  EXPECT_EQ(p.last_caught_up_time_ms(), 9000);
  EXPECT_EQ(p.last_fetch_leader_log_end(), kNoOffset);
  p.reset(9500, Offset(10), true, /*in_isr=*/false);
  EXPECT_FALSE(p.last_caught_up_time_ms());
}

TEST(FollowerProgress, ResetForANewEpochOfTheSameLeaderKeepsOffsets) {
  FollowerProgress p;
  p.on_fetch(Offset(10), Offset(2), 1000, Offset(10), BrokerEpoch(4));
  p.reset(9000, Offset(12), /*new_leader=*/false, /*in_isr=*/false);
  EXPECT_EQ(p.log_end(), Offset(10));
  EXPECT_EQ(p.broker_epoch(), BrokerEpoch(4));
  EXPECT_EQ(p.last_fetch_leader_log_end(), Offset(12));
  EXPECT_FALSE(p.last_fetch_time_ms()) << "outside the ISR: must prove itself with a new fetch";
  EXPECT_FALSE(p.last_caught_up_time_ms());
}

}  // namespace
}  // namespace samsa::replication

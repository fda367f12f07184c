#include "raft/progress.h"

#include <gtest/gtest.h>

namespace samsa::raft {
namespace {

TEST(Progress, ProbeSendsOneAppendAtATime) {
  Progress p(LogIndex(5), 3);
  EXPECT_FALSE(p.paused());
  p.sent_append(LogIndex(4), false);
  EXPECT_TRUE(p.paused());
  p.unpause();
  EXPECT_FALSE(p.paused());
}

TEST(Progress, RejectionBacksOffToTheFollowersLastIndex) {
  Progress p(LogIndex(10), 3);
  EXPECT_TRUE(p.maybe_decrease(LogIndex(9), LogIndex(3)));
  EXPECT_EQ(p.next(), LogIndex(4));
  // An answer to an older probe is ignored.
  EXPECT_FALSE(p.maybe_decrease(LogIndex(9), LogIndex(1)));
  EXPECT_EQ(p.next(), LogIndex(4));
}

TEST(Progress, ReplicateBoundsInFlightAppends) {
  Progress p(LogIndex(1), 2);
  ASSERT_TRUE(p.maybe_update(kNoIndex) == false);
  p.become_replicate();
  p.sent_append(LogIndex(3), true);
  EXPECT_FALSE(p.paused());
  p.sent_append(LogIndex(6), true);
  EXPECT_TRUE(p.paused());  // window of 2 full
  EXPECT_EQ(p.next(), LogIndex(7));
  EXPECT_TRUE(p.maybe_update(LogIndex(3)));
  EXPECT_FALSE(p.paused());  // one acknowledged
  EXPECT_EQ(p.match(), LogIndex(3));
}

TEST(Progress, StaleRejectionInReplicateIsIgnored) {
  Progress p(LogIndex(1), 4);
  p.become_replicate();
  p.maybe_update(LogIndex(5));
  EXPECT_FALSE(p.maybe_decrease(LogIndex(4), LogIndex(4)));
  EXPECT_TRUE(p.maybe_decrease(LogIndex(7), LogIndex(5)));
  EXPECT_EQ(p.next(), LogIndex(6));
}

TEST(Progress, SnapshotStateWaitsThenProbesAfterIt) {
  Progress p(LogIndex(1), 4);
  p.become_snapshot(LogIndex(20));
  EXPECT_TRUE(p.paused());
  p.maybe_update(LogIndex(20));
  p.become_probe();
  EXPECT_EQ(p.next(), LogIndex(21));
  EXPECT_FALSE(p.paused());
}

}  // namespace
}  // namespace samsa::raft

// The follower's rules of ReplicationCore and the truncation target
// (Kafka's AbstractFetcherThread, ReplicaFetcherThread, UnifiedLog;
// KIP-101, KIP-279, KIP-320).
#include <gtest/gtest.h>

#include "replication/follower_truncation.h"
#include "replication/replication_core.h"
#include "replication/test_replication_fixture.h"

namespace samsa::replication::testing {
namespace {

ReplicationConfig follower_config() {
  ReplicationConfig c;
  c.self = kF2;
  return c;
}

// Follower 2 of leader 1 in epoch 5; its log: epochs 1 x3, 3 x4 (end 7), HW 5.
class FollowerTest : public ::testing::Test {
 protected:
  FollowerTest() : core_(follower_config(), Offset(7), Offset(5)) {
    log_.append(LeaderEpoch(1), 3);
    log_.append(LeaderEpoch(3), 4);
    change_ = core_.become_follower(registration(kLeader, kEpoch, kPartitionEpoch, ids({1, 2, 3}), ids({1, 2, 3})),
                                    log_, 0);
  }
  void perform(const Ready& r) {
    if (r.truncate) log_.truncate(r.truncate->offset);
  }

  MemoryLog log_;
  ReplicationCore core_;
  RegistrationChange change_;
};

TEST_F(FollowerTest, BecomingFollowerStartsFetchingFromTheLogEnd) {
  EXPECT_EQ(change_, RegistrationChange::kNewLeaderEpoch) << "(re)start the fetcher";
  EXPECT_EQ(core_.role(), Role::kFollower);
  EXPECT_TRUE(core_.isr().empty()) << "makeFollower keeps no ISR";
  FetchPosition pos = core_.fetch_position(log_);
  EXPECT_EQ(pos.leader, kLeader);
  EXPECT_EQ(pos.current_leader_epoch, kEpoch);
  EXPECT_EQ(pos.fetch_offset, Offset(7));
  EXPECT_EQ(pos.last_fetched_epoch, LeaderEpoch(3));
  EXPECT_FALSE(core_.take_ready().truncate) << "with epochs, truncation waits for the leader's answer";
  EXPECT_EQ(core_.become_follower(registration(kLeader, kEpoch, kPartitionEpoch, ids({1, 2, 3}), ids({1, 2})), log_, 0),
            RegistrationChange::kUpdated);
  EXPECT_EQ(core_.become_follower(registration(kLeader, kEpoch, PartitionEpoch(6), ids({1, 2, 3}), ids({1})), log_, 0),
            RegistrationChange::kIgnored);
}

TEST(Follower, WithoutEpochsTruncatesToTheHighWatermark) {
  // AbstractFetcherThread: a partition without epochs cannot find its
  // divergence point; it is truncated to its HW first.
  ReplicationCore core(follower_config(), Offset(7), Offset(5));
  MemoryLog no_epochs;
  core.become_follower(registration(kLeader, kEpoch, kPartitionEpoch, ids({1, 2}), ids({1, 2})), no_epochs, 0);
  Ready r = core.take_ready();
  ASSERT_TRUE(r.truncate);
  EXPECT_EQ(*r.truncate, (Truncation{Offset(5), false}));
  EXPECT_EQ(core.log_end_offset(), Offset(5));
}

TEST_F(FollowerTest, AppendsAreContiguousAndTheHighWatermarkComesFromTheLeader) {
  core_.on_follower_append(Offset(7), Offset(10), kEpoch);
  EXPECT_EQ(core_.log_end_offset(), Offset(10));
  core_.on_leader_high_watermark(Offset(20));
  EXPECT_EQ(core_.high_watermark(), Offset(10)) << "clamped to our log end";
  core_.on_leader_high_watermark(Offset(8));
  EXPECT_EQ(core_.high_watermark(), Offset(8)) << "a follower's HW may go down (a new leader's lags)";
  EXPECT_DEATH(core_.on_follower_append(Offset(11), Offset(12), kEpoch), "follower appends are contiguous");
  EXPECT_DEATH(core_.on_follower_append(Offset(10), Offset(12), LeaderEpoch(6)), "newer than the leader");
}

TEST_F(FollowerTest, DivergingEpochInAKnownEpochCutsToTheSmallerEnd) {
  // Leader: epoch 3 ends at 6 (we have it to 7): cut to 6.
  core_.on_diverging_epoch({LeaderEpoch(3), Offset(6)}, log_);
  Ready r = core_.take_ready();
  ASSERT_TRUE(r.truncate);
  EXPECT_EQ(r.truncate->offset, Offset(6));
  EXPECT_FALSE(r.high_watermark) << "HW 5 is still below the cut";
  perform(r);
  EXPECT_EQ(core_.fetch_position(log_).fetch_offset, Offset(6));
}

TEST_F(FollowerTest, DivergingEpochWeNeverHadCutsToOurEpochBelowAndAsksAgain) {
  // KIP-279: the leader answers epoch 2 (ends at 4), which we never had:
  // cut to the end of our largest epoch below 2 (epoch 1 ends at 3), then
  // the next fetch carries our new latest epoch (1).
  TruncationTarget t = truncation_target({LeaderEpoch(2), Offset(4)}, log_, Offset(7), Offset(5));
  EXPECT_EQ(t, (TruncationTarget{Offset(3), false}));
  core_.on_diverging_epoch({LeaderEpoch(2), Offset(4)}, log_);
  Ready r = core_.take_ready();
  ASSERT_TRUE(r.truncate);
  EXPECT_EQ(r.truncate->offset, Offset(3));
  ASSERT_TRUE(r.high_watermark);
  EXPECT_EQ(*r.high_watermark, Offset(3)) << "HW <= log end (below-HW cut: unclean election only)";
  perform(r);
  EXPECT_EQ(core_.fetch_position(log_).last_fetched_epoch, LeaderEpoch(1));
}

TEST(Follower, DivergingEpochAtTheLogEndDropsAnEpochLedWithoutAppending) {
  // Chaos seed 1004: this broker led epoch 1 of an empty partition (its
  // cache: epoch 1 at 0); the leader of epoch 5 knows epochs 0 and 5 only
  // and answers epoch 0 ending at 0. The cut is at our log end and must
  // still happen, or every later fetch names epoch 1 and diverges again.
  ReplicationCore core(follower_config(), Offset(0), Offset(0));
  MemoryLog led_empty;
  led_empty.assign(LeaderEpoch(1), Offset(0));
  core.become_follower(registration(kLeader, kEpoch, kPartitionEpoch, ids({1, 2}), ids({1})), led_empty, 0);
  core.take_ready();
  ASSERT_EQ(core.fetch_position(led_empty).last_fetched_epoch, LeaderEpoch(1));
  core.on_diverging_epoch({LeaderEpoch(0), Offset(0)}, led_empty);
  Ready r = core.take_ready();
  ASSERT_TRUE(r.truncate) << "a cut at the log end is still a cut of the epoch cache";
  EXPECT_EQ(r.truncate->offset, Offset(0));
  led_empty.truncate(r.truncate->offset);
  EXPECT_FALSE(core.fetch_position(led_empty).last_fetched_epoch) << "the next fetch carries no epoch to diverge";
}

TEST(FollowerTruncation, KafkaGetOffsetTruncationStateCases) {
  MemoryLog log;
  log.append(LeaderEpoch(1), 3);
  log.append(LeaderEpoch(3), 4);  // end 7
  // Leader cannot place our epoch: fall back to the HW.
  EXPECT_EQ(truncation_target({kNoLeaderEpoch, kNoOffset}, log, Offset(7), Offset(5)), (TruncationTarget{Offset(5)}));
  // A leader without epochs in its answer: its offset.
  EXPECT_EQ(truncation_target({kNoLeaderEpoch, Offset(4)}, log, Offset(7), Offset(5)), (TruncationTarget{Offset(4)}));
  // Same epoch, leader's end beyond ours: nothing to cut (min with our end).
  EXPECT_EQ(truncation_target({LeaderEpoch(3), Offset(9)}, log, Offset(7), Offset(5)), (TruncationTarget{Offset(7)}));
  // The leader's epoch is above our latest: our cache says UNDEFINED, take the leader's offset.
  EXPECT_EQ(truncation_target({LeaderEpoch(4), Offset(6)}, log, Offset(7), Offset(5)), (TruncationTarget{Offset(6)}));
  // An epoch below all of ours: (that epoch, our first start) -> min.
  EXPECT_EQ(truncation_target({LeaderEpoch(0), Offset(2)}, log, Offset(7), Offset(5)), (TruncationTarget{Offset(0)}));
}

TEST_F(FollowerTest, OutOfRangeTruncation) {
  // fetchOffsetAndTruncate: the leader ends below us (unclean election).
  EXPECT_EQ(out_of_range_truncation(Offset(0), Offset(6), Offset(7)), (Truncation{Offset(6), false}));
  // We end below the leader's log start: restart empty there.
  EXPECT_EQ(out_of_range_truncation(Offset(100), Offset(120), Offset(7)), (Truncation{Offset(100), true}));
  EXPECT_EQ(out_of_range_truncation(Offset(0), Offset(9), Offset(7)), std::nullopt);
  core_.on_fetch_out_of_range(Offset(100), Offset(120));
  Ready r = core_.take_ready();
  ASSERT_TRUE(r.truncate);
  EXPECT_TRUE(r.truncate->fully);
  EXPECT_EQ(core_.log_end_offset(), Offset(100));
  EXPECT_EQ(core_.high_watermark(), Offset(100));
}

TEST(EpochCache, EndOffsetForAsKafka) {
  // LeaderEpochFileCache.endOffsetFor.
  std::vector<EpochStart> cache{
      {LeaderEpoch(2), Offset(0)}, {LeaderEpoch(4), Offset(10)}, {LeaderEpoch(7), Offset(15)}};
  EXPECT_EQ(end_offset_for_epoch(cache, LeaderEpoch(7), Offset(20)), (EpochEndOffset{LeaderEpoch(7), Offset(20)}));
  EXPECT_EQ(end_offset_for_epoch(cache, LeaderEpoch(5), Offset(20)), (EpochEndOffset{LeaderEpoch(4), Offset(15)}));
  EXPECT_EQ(end_offset_for_epoch(cache, LeaderEpoch(2), Offset(20)), (EpochEndOffset{LeaderEpoch(2), Offset(10)}));
  EXPECT_EQ(end_offset_for_epoch(cache, LeaderEpoch(1), Offset(20)), (EpochEndOffset{LeaderEpoch(1), Offset(0)}));
  EXPECT_EQ(end_offset_for_epoch(cache, LeaderEpoch(8), Offset(20)), std::nullopt);
  EXPECT_EQ(end_offset_for_epoch(std::vector<EpochStart>{}, LeaderEpoch(1), Offset(0)), std::nullopt);
}

TEST(FollowerToLeader, BecomingLeaderRecordsTheEpochStart) {
  ReplicationCore core(follower_config(), Offset(7), Offset(5));
  MemoryLog log;
  log.append(LeaderEpoch(3), 7);
  core.become_follower(registration(kLeader, kEpoch, kPartitionEpoch, ids({1, 2}), ids({1, 2})), log, 0);
  core.take_ready();
  core.become_leader(registration(kF2, LeaderEpoch(6), PartitionEpoch(8), ids({1, 2}), ids({2})), 0);
  Ready r = core.take_ready();
  ASSERT_TRUE(r.assign_epoch_start);
  EXPECT_EQ(*r.assign_epoch_start, (EpochStart{LeaderEpoch(6), Offset(7)}));
  EXPECT_EQ(core.high_watermark(), Offset(7)) << "ISR of one: everything it has is committed";
}

}  // namespace
}  // namespace samsa::replication::testing

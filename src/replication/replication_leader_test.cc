// The leader's rules of ReplicationCore, each against the Kafka code it
// follows (core/.../cluster/Partition.scala unless named otherwise).
#include <gtest/gtest.h>

#include "replication/replication_core.h"
#include "replication/test_replication_fixture.h"

namespace samsa::replication::testing {
namespace {

// --- maybeIncrementLeaderHW ---------------------------------------------------

TEST_F(LeaderTest, HighWatermarkIsTheSmallestLogEndOverTheIsr) {
  append(10);
  EXPECT_EQ(hw(), Offset(0));  // followers' log ends unknown since we became leader
  fetch(kF2, 10);
  EXPECT_EQ(hw(), Offset(0));  // still waiting for 3
  fetch(kF3, 4);
  EXPECT_EQ(hw(), Offset(4));
  Ready r = core_.take_ready();
  ASSERT_TRUE(r.high_watermark);
  EXPECT_EQ(*r.high_watermark, Offset(4));
  fetch(kF3, 10);
  EXPECT_EQ(hw(), Offset(10));
}

TEST_F(LeaderTest, HighWatermarkNeverDecreasesOnALeader) {
  append(10);
  fetch(kF2, 8);
  fetch(kF3, 8);
  ASSERT_EQ(hw(), Offset(8));
  fetch(kF3, 3);  // a fetch from lower down moves the follower's end back...
  EXPECT_EQ(core_.follower(kF3)->log_end(), Offset(3));
  EXPECT_EQ(hw(), Offset(8));  // ...never the HW (UnifiedLog.maybeIncrementHighWatermark)
}

TEST_F(LeaderTest, NewLeaderForgetsFollowerOffsetsUntilTheyFetch) {
  // Replica.resetReplicaState(isNewLeader = true): the log ends of the
  // followers are unknown, so nothing is committed on their behalf.
  append(5);
  fetch(kF2, 5);
  EXPECT_EQ(hw(), Offset(0));
  EXPECT_FALSE(core_.follower(kF3)->log_end().has_value());
}

// KIP-497: a member being added counts for the HW at once (stricter, so
// safe if the controller refuses). The check that catches an HW computed
// on the committed ISR only.
class LeaderWithIsrOfTwo : public LeaderTest {
 protected:
  LeaderWithIsrOfTwo() : LeaderTest(ids({1, 2})) {}
};

TEST_F(LeaderWithIsrOfTwo, HighWatermarkWaitsForAMemberBeingAdded) {
  append(10);
  fetch(kF2, 10);
  ASSERT_EQ(hw(), Offset(10));
  fetch(kF3, 10);  // reached the HW and the epoch start: proposed
  ASSERT_TRUE(core_.pending_alter_partition());
  EXPECT_TRUE(core_.pending_alter_partition()->expand);
  EXPECT_EQ(core_.maximal_isr(), ids({1, 2, 3}));
  EXPECT_EQ(core_.isr(), ids({1, 2}));
  advance(kLagMs + 1);  // 3 is no longer "caught up": only the maximal ISR holds it
  append(5);
  fetch(kF2, 15);
  EXPECT_EQ(hw(), Offset(10)) << "the HW passed a member of the maximal ISR (pending expansion)";
  fetch(kF3, 15);
  EXPECT_EQ(hw(), Offset(15));
}

TEST_F(LeaderWithIsrOfTwo, CaughtUpFollowerOutsideTheIsrHoldsTheHighWatermark) {
  // shouldWaitForReplicaToJoinIsr: a caught-up, ISR-eligible follower is
  // waited for, or it could never reach the HW and join.
  append(10);
  fetch(kF2, 10);
  ASSERT_EQ(hw(), Offset(10));
  fetch(kF3, 2);  // below the HW: does not join, and is not caught up
  EXPECT_FALSE(core_.pending_alter_partition());
  append(5);
  fetch(kF2, 15);
  EXPECT_EQ(hw(), Offset(15)) << "3 was never caught up: not waited for";
  fetch(kF3, 15);  // at the leader's end: caught up, and proposed...
  ASSERT_TRUE(core_.pending_alter_partition());
  core_.on_alter_partition_error(core_.pending_alter_partition()->id, AlterPartitionError::kIneligibleReplica);
  ASSERT_FALSE(core_.pending_alter_partition());  // ...but refused: outside the (maximal) ISR
  append(5);
  fetch(kF2, 20);
  EXPECT_EQ(hw(), Offset(15)) << "a caught-up eligible follower is waited for";
  advance(kLagMs + 1);
  append(1);
  EXPECT_EQ(hw(), Offset(20)) << "once it lags past replica.lag.time.max.ms it no longer is";
}

class LeaderAloneWithMinIsrTwo : public LeaderTest {
 protected:
  LeaderAloneWithMinIsrTwo() : LeaderTest(ids({1}), 2) {}
};

TEST_F(LeaderAloneWithMinIsrTwo, HighWatermarkStallsBelowMinIsr) {
  // Strict min ISR (KAFKA-15583, Kafka 3.7+): below min.insync.replicas
  // nothing more becomes visible, also for acks=0/1 data.
  EXPECT_TRUE(core_.is_under_min_isr());
  EXPECT_EQ(core_.check_append(1), ProduceError::kNone);
  append(3);
  EXPECT_EQ(hw(), Offset(0));
}

// --- maybeExpandIsr / isFollowerInSync / isReplicaIsrEligible --------------------

TEST(LeaderExpand, FollowerMustReachTheEpochStartNotJustTheHighWatermark) {
  // The new leader already has 10 records (epoch start 10) and an HW of 4
  // from its follower days: a follower at 6 is past the HW but short of
  // committed data the HW may not show yet.
  ReplicationConfig c;
  c.self = kLeader;
  ReplicationCore core(c, Offset(10), Offset(4));
  for (int b = 1; b <= 3; ++b) core.set_broker(NodeId(b), BrokerStatus{kBrokerEpoch, false, false});
  core.become_leader(registration(kLeader, kEpoch, kPartitionEpoch, ids({1, 2, 3}), ids({1, 2})), 0);
  EXPECT_EQ(core.leader_epoch_start_offset(), Offset(10));
  EXPECT_FALSE(core.high_watermark_trusted());  // ListOffsets: OFFSET_NOT_AVAILABLE
  MemoryLog log;
  log.append(LeaderEpoch(4), 10);
  log.assign(kEpoch, Offset(10));
  FollowerFetch f;
  f.replica = kF3;
  f.broker_epoch = kBrokerEpoch;
  f.fetch_offset = Offset(6);
  f.current_leader_epoch = kEpoch;
  core.on_follower_fetch(f, Offset(0), log, 0);
  EXPECT_FALSE(core.pending_alter_partition()) << "joined below the leader epoch start";
  f.fetch_offset = Offset(10);
  core.on_follower_fetch(f, Offset(0), log, 0);
  ASSERT_TRUE(core.pending_alter_partition());
  EXPECT_EQ(core.pending_alter_partition()->new_isr,
            (std::vector<IsrMember>{{kLeader, kBrokerEpoch}, {kF2, kNoBrokerEpoch}, {kF3, kBrokerEpoch}}));
}

TEST_F(LeaderWithIsrOfTwo, OnlyEligibleBrokersJoin) {
  append(4);
  fetch(kF2, 4);
  core_.set_broker(kF3, BrokerStatus{kBrokerEpoch, true, false});  // fenced
  fetch(kF3, 4);
  EXPECT_FALSE(core_.pending_alter_partition());
  core_.set_broker(kF3, BrokerStatus{kBrokerEpoch, false, true});  // controlled shutdown
  fetch(kF3, 4);
  EXPECT_FALSE(core_.pending_alter_partition());
  core_.set_broker(kF3, std::nullopt);  // not registered
  fetch(kF3, 4);
  EXPECT_FALSE(core_.pending_alter_partition());
  // KIP-903: its fetches carry epoch 10, the metadata says 9 (not stale,
  // but not the registration the controller knows): not eligible.
  core_.set_broker(kF3, BrokerStatus{BrokerEpoch(9), false, false});
  fetch(kF3, 4);
  EXPECT_FALSE(core_.pending_alter_partition());
  core_.set_broker(kF3, BrokerStatus{kBrokerEpoch, false, false});
  fetch(kF3, 4);
  EXPECT_TRUE(core_.pending_alter_partition());
}

// --- maybeShrinkIsr / getOutOfSyncReplicas ----------------------------------------

TEST_F(LeaderTest, StuckFollowerLeavesAfterLagTimeMaxOnlyOnceCommitted) {
  append(10);
  fetch(kF2, 10);
  fetch(kF3, 10);
  ASSERT_EQ(hw(), Offset(10));
  append(10);
  advance(kLagMs);
  fetch(kF2, 20);
  core_.tick(now_);
  EXPECT_FALSE(core_.pending_alter_partition()) << "exactly replica.lag.time.max.ms is still in sync";
  advance(1);
  core_.tick(now_);
  ASSERT_TRUE(core_.pending_alter_partition());
  const AlterPartitionProposal p = *core_.pending_alter_partition();
  EXPECT_FALSE(p.expand);
  EXPECT_EQ(p.leader_epoch, kEpoch);
  EXPECT_EQ(p.partition_epoch, kPartitionEpoch);
  EXPECT_EQ(p.new_isr, (std::vector<IsrMember>{{kLeader, kBrokerEpoch}, {kF2, kBrokerEpoch}}));
  Ready r = core_.take_ready();
  ASSERT_TRUE(r.alter_partition);
  EXPECT_EQ(r.alter_partition->id, p.id);
  // prepareIsrShrink: the maximal ISR is still the old one.
  EXPECT_EQ(core_.maximal_isr(), ids({1, 2, 3}));
  EXPECT_EQ(hw(), Offset(10)) << "a shrink counts only once committed";
  core_.on_alter_partition_result(p.id, {kEpoch, PartitionEpoch(8), ids({1, 2})}, now_);
  EXPECT_EQ(core_.isr(), ids({1, 2}));
  EXPECT_EQ(core_.partition_epoch(), PartitionEpoch(8));
  EXPECT_EQ(hw(), Offset(20));
}

TEST_F(LeaderTest, FollowerTrailingABusyProducerByABatchStaysInSync) {
  // Replica.updateFetchStateOrThrow: reaching the leader's end as of the
  // previous fetch credits that fetch's time. Follower 3 always asks for
  // what the leader had at its previous fetch, never the current end.
  int64_t previous_end = 0;
  for (int round = 0; round < 10; ++round) {
    int64_t end = core_.log_end_offset().value();
    fetch(kF2, end);
    fetch(kF3, previous_end);
    previous_end = end;
    append(5);
    advance(kLagMs / 3);
    core_.tick(now_);
  }
  EXPECT_FALSE(core_.pending_alter_partition()) << "one batch behind is in sync";
  // One that keeps fetching but never reaches even the previous end is
  // slow, and goes.
  const int64_t stuck_at = core_.follower(kF3)->log_end()->value();
  for (int round = 0; round < 5 && !core_.pending_alter_partition(); ++round) {
    fetch(kF2, core_.log_end_offset().value());
    fetch(kF3, stuck_at);
    append(5);
    advance(kLagMs / 3);
    core_.tick(now_);
  }
  ASSERT_TRUE(core_.pending_alter_partition());
  EXPECT_EQ(core_.pending_alter_partition()->new_isr,
            (std::vector<IsrMember>{{kLeader, kBrokerEpoch}, {kF2, kBrokerEpoch}}));
}

TEST_F(LeaderTest, NoSecondChangeWhileOneIsInFlight) {
  advance(kLagMs + 1);
  fetch(kF2, 0);
  core_.tick(now_);
  ASSERT_TRUE(core_.pending_alter_partition());
  uint64_t first = core_.pending_alter_partition()->id;
  advance(kLagMs + 1);
  core_.tick(now_);  // 2 is out of sync too now; still the first proposal
  EXPECT_EQ(core_.pending_alter_partition()->id, first);
}

// --- AlterPartition answers (submitAlterPartition, handleAlterPartition*) ----------

TEST_F(LeaderTest, AlterPartitionAnswersTheLeaderMustIgnore) {
  advance(kLagMs + 1);
  core_.tick(now_);
  ASSERT_TRUE(core_.pending_alter_partition());
  uint64_t id = core_.pending_alter_partition()->id;
  core_.on_alter_partition_result(id + 1, {kEpoch, PartitionEpoch(8), ids({1})}, now_);  // not our proposal
  core_.on_alter_partition_result(id, {LeaderEpoch(6), PartitionEpoch(8), ids({1})}, now_);  // other leader epoch
  core_.on_alter_partition_result(id, {kEpoch, PartitionEpoch(6), ids({1})}, now_);  // older partition epoch
  EXPECT_TRUE(core_.pending_alter_partition());
  EXPECT_EQ(core_.isr(), ids({1, 2, 3}));
  core_.on_alter_partition_result(id, {kEpoch, kPartitionEpoch, ids({1})}, now_);  // same epoch: nothing to change
  EXPECT_FALSE(core_.pending_alter_partition());
  EXPECT_EQ(core_.isr(), ids({1}));
}

TEST_F(LeaderTest, AlterPartitionErrorsRevertStayOrRetry) {
  advance(kLagMs + 1);
  core_.tick(now_);
  uint64_t id = core_.pending_alter_partition()->id;
  core_.take_ready();
  core_.on_alter_partition_error(id, AlterPartitionError::kFencedLeaderEpoch);
  EXPECT_TRUE(core_.pending_alter_partition()) << "stays pending until new metadata";
  core_.on_alter_partition_error(id, AlterPartitionError::kInvalidUpdateVersion);
  EXPECT_TRUE(core_.pending_alter_partition());
  core_.on_alter_partition_error(id, AlterPartitionError::kRetriable);
  Ready r = core_.take_ready();
  ASSERT_TRUE(r.alter_partition);
  EXPECT_EQ(r.alter_partition->id, id) << "the same proposal again";
  core_.on_alter_partition_error(id, AlterPartitionError::kIneligibleReplica);
  EXPECT_FALSE(core_.pending_alter_partition()) << "not applied by any controller: back to committed";
  EXPECT_EQ(core_.maximal_isr(), ids({1, 2, 3}));
  // New metadata ends a pending change too (makeLeader commits its ISR).
  core_.tick(now_);
  ASSERT_TRUE(core_.pending_alter_partition());
  core_.become_leader(registration(kLeader, kEpoch, PartitionEpoch(8), ids({1, 2, 3}), ids({1, 2})), now_);
  EXPECT_FALSE(core_.pending_alter_partition());
  EXPECT_EQ(core_.isr(), ids({1, 2}));
}

TEST_F(LeaderWithIsrOfTwo, TheSameVersionAgainKeepsAPendingExpansion) {
  // Found by the property test (seed 51): the AlterPartition answer for a
  // shrink brings partition epoch 8 first, the leader proposes an
  // expansion based on 8, then the metadata record for 8 arrives. Kafka's
  // makeLeader would drop the pending expansion and ignore its answer, so
  // the controller's ISR could hold a member the leader's HW ignores.
  append(4);
  fetch(kF2, 4);
  fetch(kF3, 4);
  ASSERT_TRUE(core_.pending_alter_partition());
  EXPECT_EQ(core_.become_leader(registration(kLeader, kEpoch, kPartitionEpoch, ids({1, 2, 3}), ids({1, 2})), now_),
            RegistrationChange::kUpdated);
  ASSERT_TRUE(core_.pending_alter_partition()) << "same version: no news, the expansion stays pending";
  EXPECT_EQ(core_.maximal_isr(), ids({1, 2, 3}));
  uint64_t id = core_.pending_alter_partition()->id;
  core_.on_alter_partition_result(id, {kEpoch, PartitionEpoch(8), ids({1, 2, 3})}, now_);
  EXPECT_EQ(core_.isr(), ids({1, 2, 3}));
}

// --- acks and min.insync.replicas (appendRecordsToLeader, checkEnoughReplicasReachOffset) ---

class LeaderMinIsrTwo : public LeaderTest {
 protected:
  LeaderMinIsrTwo() : LeaderTest(ids({1, 2, 3}), 2) {}
};

TEST_F(LeaderMinIsrTwo, AcksAllWaitsForTheHighWatermark) {
  EXPECT_EQ(core_.check_append(-1), ProduceError::kNone);
  append(3);
  EXPECT_EQ(core_.await_produce(1, Offset(3)), std::nullopt);
  append(2);
  EXPECT_EQ(core_.await_produce(2, Offset(5)), std::nullopt);
  EXPECT_EQ(core_.waiting_produces(), 2u);
  fetch(kF2, 5);
  fetch(kF3, 3);
  Ready r = core_.take_ready();
  EXPECT_EQ(r.completed_produces, (std::vector<ProduceCompletion>{{1, ProduceError::kNone}}));
  fetch(kF3, 5);
  r = core_.take_ready();
  EXPECT_EQ(r.completed_produces, (std::vector<ProduceCompletion>{{2, ProduceError::kNone}}));
  EXPECT_EQ(core_.await_produce(3, Offset(5)), ProduceError::kNone) << "already covered: answered at once";
}

TEST_F(LeaderMinIsrTwo, NotEnoughReplicasBeforeTheAppend) {
  advance(kLagMs + 1);
  fetch(kF2, 0);
  core_.tick(now_);
  core_.on_alter_partition_result(core_.pending_alter_partition()->id, {kEpoch, PartitionEpoch(8), ids({1, 2})},
                                  now_);
  EXPECT_EQ(core_.check_append(-1), ProduceError::kNone);  // 2 >= min.insync.replicas
  core_.set_min_insync_replicas(3);
  EXPECT_EQ(core_.check_append(-1), ProduceError::kNotEnoughReplicas);
  EXPECT_EQ(core_.check_append(1), ProduceError::kNone) << "acks=1 does not care";
  EXPECT_EQ(core_.check_append(0), ProduceError::kNone);
  core_.set_min_insync_replicas(5);
  EXPECT_EQ(core_.effective_min_isr(), 3) << "min(min.insync.replicas, replication factor)";
}

TEST_F(LeaderMinIsrTwo, NotEnoughReplicasAfterAppendWhenTheIsrIsBelowMinOnceCovered) {
  // checkEnoughReplicasReachOffset: covered by the HW, but the maximal ISR
  // is below min.insync.replicas by then. With the strict-min-ISR HW rule
  // a shrink below min stalls the HW (the wait then times out); the answer
  // is reached when min.insync.replicas rises over the ISR (AlterConfigs).
  append(4);
  fetch(kF2, 4);
  fetch(kF3, 4);
  ASSERT_EQ(hw(), Offset(4));
  EXPECT_EQ(core_.await_produce(1, Offset(4)), ProduceError::kNone);
  append(1);
  advance(kLagMs + 1);
  core_.tick(now_);  // 2 and 3 stopped fetching
  ASSERT_TRUE(core_.pending_alter_partition());
  core_.on_alter_partition_result(core_.pending_alter_partition()->id, {kEpoch, PartitionEpoch(8), ids({1})}, now_);
  EXPECT_EQ(hw(), Offset(4)) << "ISR {1} < min 2: the HW stalls";
  EXPECT_EQ(core_.await_produce(2, Offset(5)), std::nullopt);
  core_.set_min_insync_replicas(1);
  append(1);
  ASSERT_EQ(hw(), Offset(6));
  Ready r = core_.take_ready();
  EXPECT_EQ(r.completed_produces, (std::vector<ProduceCompletion>{{2, ProduceError::kNone}}));
  core_.set_min_insync_replicas(2);
  EXPECT_EQ(core_.await_produce(3, Offset(6)), ProduceError::kNotEnoughReplicasAfterAppend);
}

TEST_F(LeaderMinIsrTwo, WaitsEndWhenLeadershipGoesAndCanBeCancelled) {
  append(3);
  EXPECT_EQ(core_.await_produce(1, Offset(3)), std::nullopt);
  EXPECT_EQ(core_.await_produce(2, Offset(3)), std::nullopt);
  core_.cancel_produce(1);  // the caller's timer: REQUEST_TIMED_OUT
  EXPECT_EQ(core_.waiting_produces(), 1u);
  MemoryLog empty;
  core_.become_follower(registration(kF2, LeaderEpoch(6), PartitionEpoch(8), ids({1, 2, 3}), ids({2, 3})), empty,
                        now_);
  Ready r = core_.take_ready();
  EXPECT_EQ(r.completed_produces, (std::vector<ProduceCompletion>{{2, ProduceError::kNotLeaderOrFollower}}));
  EXPECT_EQ(core_.check_append(-1), ProduceError::kNotLeaderOrFollower);
  EXPECT_EQ(core_.await_produce(3, Offset(1)), ProduceError::kNotLeaderOrFollower);
}

// --- Follower fetch validation (fetchRecords, readRecords) --------------------------

TEST_F(LeaderTest, FetchErrorsAsKafkaAnswersThem) {
  append(5);
  FollowerFetch f = fetch_of(kF2, 5);
  f.current_leader_epoch = LeaderEpoch(4);
  EXPECT_EQ(core_.on_follower_fetch(f, Offset(0), log_, now_).error, FetchError::kFencedLeaderEpoch);
  f.current_leader_epoch = LeaderEpoch(6);
  EXPECT_EQ(core_.on_follower_fetch(f, Offset(0), log_, now_).error, FetchError::kUnknownLeaderEpoch);
  FollowerFetch stranger = fetch_of(NodeId(9), 0);
  EXPECT_EQ(core_.on_follower_fetch(stranger, Offset(0), log_, now_).error, FetchError::kUnknownLeaderEpoch)
      << "not a replica, with an epoch: may be a reassignment target, retry";
  stranger.current_leader_epoch.reset();
  EXPECT_EQ(core_.on_follower_fetch(stranger, Offset(0), log_, now_).error, FetchError::kNotLeaderOrFollower);
  EXPECT_EQ(fetch(kF2, 6).error, FetchError::kOffsetOutOfRange) << "beyond our log end";
  EXPECT_EQ(core_.on_follower_fetch(fetch_of(kF2, 1), Offset(2), log_, now_).error, FetchError::kOffsetOutOfRange);
  FollowerFetch old_incarnation = fetch_of(kF2, 5);
  old_incarnation.broker_epoch = BrokerEpoch(9);  // KIP-903: metadata has 10
  EXPECT_EQ(core_.on_follower_fetch(old_incarnation, Offset(0), log_, now_).error, FetchError::kNotLeaderOrFollower);
  EXPECT_FALSE(core_.follower(kF2)->log_end()) << "no error path moves a follower's state";
  FollowerFetch unknown_epoch = fetch_of(kF2, 5);
  unknown_epoch.broker_epoch = kNoBrokerEpoch;  // -1 skips the check
  EXPECT_EQ(core_.on_follower_fetch(unknown_epoch, Offset(0), log_, now_).error, FetchError::kNone);
}

TEST_F(LeaderTest, DivergingEpochForAFollowerWithAnotherHistory) {
  // KIP-320 / Fetch v12: our epochs: 5 from 0. A follower that fetched up to
  // 8 in epoch 3 (from an old leader we never followed) diverges at the
  // start of our first epoch above 3.
  append(10);
  FollowerFetch f = fetch_of(kF2, 8);
  f.last_fetched_epoch = LeaderEpoch(3);
  FetchDecision d = core_.on_follower_fetch(f, Offset(0), log_, now_);
  EXPECT_EQ(d.error, FetchError::kNone);
  ASSERT_TRUE(d.diverging_epoch);
  EXPECT_EQ(*d.diverging_epoch, (EpochEndOffset{LeaderEpoch(3), Offset(0)}));
  EXPECT_FALSE(d.serves_records());
  EXPECT_FALSE(core_.follower(kF2)->log_end()) << "a diverging fetch does not count as progress";
  f.last_fetched_epoch = kEpoch;  // same history: read
  EXPECT_TRUE(core_.on_follower_fetch(f, Offset(0), log_, now_).serves_records());
  f.last_fetched_epoch = LeaderEpoch(7);  // an epoch above ours: cannot tell
  EXPECT_EQ(core_.on_follower_fetch(f, Offset(0), log_, now_).error, FetchError::kOffsetOutOfRange);
}

TEST_F(LeaderTest, FetchAnswersWithTheHighWatermarkBeforeItsOwnUpdate) {
  append(4);
  fetch(kF2, 4);
  FetchDecision d = fetch(kF3, 4);
  EXPECT_EQ(d.high_watermark, Offset(0));  // LogReadInfo carries the HW before the read
  EXPECT_EQ(d.log_end_offset, Offset(4));
  EXPECT_EQ(hw(), Offset(4));
}

// --- makeLeader -----------------------------------------------------------------

TEST_F(LeaderTest, StaleRegistrationsAreIgnoredAndEpochsOnlyGrow) {
  append(3);
  fetch(kF2, 3);
  EXPECT_EQ(core_.become_leader(registration(kLeader, kEpoch, PartitionEpoch(6), ids({1, 2, 3}), ids({1})), now_),
            RegistrationChange::kIgnored);
  EXPECT_EQ(core_.isr(), ids({1, 2, 3}));
  EXPECT_EQ(core_.become_leader(registration(kLeader, kEpoch, kPartitionEpoch, ids({1, 2, 3}), ids({1, 2})), now_),
            RegistrationChange::kUpdated);
  EXPECT_EQ(core_.follower(kF2)->log_end(), Offset(3)) << "same leader epoch: follower state kept";
  EXPECT_EQ(core_.become_leader(registration(kLeader, LeaderEpoch(6), PartitionEpoch(8), ids({1, 2, 3}), ids({1, 2})),
                                now_),
            RegistrationChange::kNewLeaderEpoch);
  EXPECT_FALSE(core_.follower(kF2)->log_end())
      << "a new epoch forgets follower offsets, also when the leader stays (Kafka keeps them; property seed 254)";
  EXPECT_EQ(core_.follower(kF2)->last_caught_up_time_ms(), now_) << "in the ISR: caught-up clock restarts";
  EXPECT_FALSE(core_.follower(kF3)->last_caught_up_time_ms()) << "outside the ISR: cleared";
  EXPECT_EQ(core_.leader_epoch_start_offset(), Offset(3));
  Ready r = core_.take_ready();
  ASSERT_TRUE(r.assign_epoch_start);
  EXPECT_EQ(*r.assign_epoch_start, (EpochStart{LeaderEpoch(6), Offset(3)}));
  EXPECT_DEATH(core_.become_leader(registration(kLeader, LeaderEpoch(5), PartitionEpoch(9), ids({1, 2, 3}), ids({1})),
                                   now_),
               "leader epoch went backwards");
}

TEST(LeaderSingleNode, HighWatermarkFollowsTheLogEnd) {
  // The broker today: one node leads everything, ISR of one.
  ReplicationConfig c;
  c.self = NodeId(1);
  ReplicationCore core(c, Offset(7), Offset(9));
  EXPECT_EQ(core.high_watermark(), Offset(7)) << "a checkpointed HW is clamped to the log end";
  core.become_leader(registration(NodeId(1), LeaderEpoch(0), PartitionEpoch(0), ids({1}), ids({1})), 0);
  EXPECT_EQ(core.high_watermark(), Offset(7));
  core.on_local_append(Offset(12), 0);
  EXPECT_EQ(core.high_watermark(), Offset(12));
  EXPECT_EQ(core.await_produce(1, Offset(12)), ProduceError::kNone);
}

TEST(LeaderInvariants, RegistrationsThatBreakTheIsrRulesAbort) {
  ReplicationConfig c;
  c.self = NodeId(1);
  ReplicationCore core(c, Offset(0), Offset(0));
  EXPECT_DEATH(core.become_leader(registration(NodeId(1), LeaderEpoch(0), PartitionEpoch(0), ids({1, 2}), ids({2})), 0),
               "the leader is in its ISR");
  EXPECT_DEATH(
      core.become_leader(registration(NodeId(1), LeaderEpoch(0), PartitionEpoch(0), ids({1, 2}), ids({1, 3})), 0),
      "ISR member outside the replicas");
}

}  // namespace
}  // namespace samsa::replication::testing

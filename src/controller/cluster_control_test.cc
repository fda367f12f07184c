#include "controller/cluster_control.h"

#include <gtest/gtest.h>

#include "controller/cluster_control_wire.h"

namespace samsa {
namespace {

using protocol::ErrorCode;
using Fencing = BrokerRegistrationChangeRecord::Fencing;

Uuid incarnation(uint8_t n) {
  Uuid id;
  id.bytes[15] = n;
  return id;
}

// A controller's view: the image it plans against, committed records at
// growing offsets (one per record, as a batch of one), the clock explicit.
class ClusterControlTest : public ::testing::Test {
 protected:
  ClusterControlTest() : control_(ClusterControlConfig{"cluster-a", 9000}) { control_.activate(now_, image_); }

  BrokerRegistrationEvent registration(int id, uint8_t inc = 1) {
    return BrokerRegistrationEvent{NodeId(id), "cluster-a", incarnation(inc),
                                   {{"PLAINTEXT", "127.0.0.1", uint16_t(9090 + id), 0}}, std::nullopt};
  }

  // Commits records: each lands at the next offset.
  void commit(const std::vector<MetadataRecord>& records) {
    for (const MetadataRecord& r : records) {
      image_.apply(r);
      control_.replay(r, next_offset_);
      next_offset_ = next_offset_ + 1;
    }
  }

  BrokerEpoch register_ok(int id, uint8_t inc = 1) {
    auto decision = control_.register_broker(now_, image_, registration(id, inc), next_offset_);
    EXPECT_TRUE(std::holds_alternative<RegistrationDecision>(decision));
    auto& d = std::get<RegistrationDecision>(decision);
    commit(d.records);
    return d.epoch;
  }

  HeartbeatDecision heartbeat_ok(int id, BrokerEpoch epoch, Offset offset, bool want_fence = false,
                                 bool want_shut_down = false) {
    auto decision = control_.heartbeat(now_, image_, {NodeId(id), epoch, offset, want_fence, want_shut_down},
                                       next_offset_);
    EXPECT_TRUE(std::holds_alternative<HeartbeatDecision>(decision));
    auto d = std::get<HeartbeatDecision>(decision);
    commit(d.records);
    return d;
  }

  LifecycleError heartbeat_error(int id, BrokerEpoch epoch) {
    auto decision = control_.heartbeat(now_, image_, {NodeId(id), epoch, Offset(0), false, false}, next_offset_);
    EXPECT_TRUE(std::holds_alternative<LifecycleError>(decision));
    return std::get<LifecycleError>(decision);
  }

  // Registered and unfenced (caught up with everything committed).
  BrokerEpoch running_broker(int id) {
    BrokerEpoch epoch = register_ok(id);
    HeartbeatDecision d = heartbeat_ok(id, epoch, next_offset_);
    EXPECT_FALSE(d.is_fenced);
    return epoch;
  }

  // A topic with one partition led by `leader`, all of `replicas` in sync.
  Uuid topic_led_by(const std::string& name, int leader, std::vector<NodeId> replicas) {
    Uuid id = incarnation(uint8_t(100 + image_.topics().size()));
    PartitionRecord p{id, PartitionId(0), replicas, replicas, NodeId(leader), LeaderEpoch(0), 0};
    commit({TopicRecord{name, id}, p});
    return id;
  }

  int64_t now_ = 1000;
  Offset next_offset_{0};
  MetadataImage image_;
  ClusterControl control_;
};

TEST_F(ClusterControlTest, RegistrationEpochIsTheOffsetOfItsRecordAndStartsFenced) {
  next_offset_ = Offset(41);
  auto decision = control_.register_broker(now_, image_, registration(1), next_offset_);
  auto& d = std::get<RegistrationDecision>(decision);
  EXPECT_EQ(d.epoch, BrokerEpoch(41));
  ASSERT_EQ(d.records.size(), 1u);
  const auto& r = std::get<RegisterBrokerRecord>(d.records[0]);
  EXPECT_EQ(r.broker_epoch, BrokerEpoch(41));
  EXPECT_TRUE(r.fenced);
  EXPECT_EQ(r.incarnation_id, incarnation(1));
  EXPECT_EQ(r.endpoints.at(0).port, 9091);
  commit(d.records);
  EXPECT_EQ(control_.registration_offset(NodeId(1)), Offset(41));
  EXPECT_FALSE(control_.is_eligible_leader(image_, NodeId(1)));
}

TEST_F(ClusterControlTest, SameIncarnationAgainKeepsEpochAndState) {
  BrokerEpoch epoch = running_broker(1);
  auto again = control_.register_broker(now_, image_, registration(1), next_offset_ + 5);
  auto& d = std::get<RegistrationDecision>(again);
  EXPECT_EQ(d.epoch, epoch);
  const auto& r = std::get<RegisterBrokerRecord>(d.records.at(0));
  EXPECT_FALSE(r.fenced);  // unfenced, as it was
  EXPECT_TRUE(d.work.empty());
  commit(d.records);
  EXPECT_EQ(image_.broker(NodeId(1))->epoch, epoch);
  EXPECT_TRUE(control_.is_eligible_leader(image_, NodeId(1)));
}

TEST_F(ClusterControlTest, NewIncarnationWhileTheOldSessionLivesIsADuplicate) {
  BrokerEpoch first = running_broker(1);
  now_ += 9000;  // the session is valid up to and including last contact + timeout
  auto refused = control_.register_broker(now_, image_, registration(1, 2), next_offset_);
  ASSERT_TRUE(std::holds_alternative<LifecycleError>(refused));
  EXPECT_EQ(std::get<LifecycleError>(refused).code, ErrorCode::kDuplicateBrokerRegistration);
  EXPECT_EQ(std::get<LifecycleError>(refused).message, "Another broker is registered with that broker id.");

  now_ += 1;  // expired: the new incarnation takes over, with a higher epoch
  BrokerEpoch second = register_ok(1, 2);
  EXPECT_GT(second, first);
  EXPECT_TRUE(image_.broker(NodeId(1))->fenced);
  EXPECT_EQ(image_.broker(NodeId(1))->incarnation_id, incarnation(2));
}

TEST_F(ClusterControlTest, NewIncarnationOfAFencedBrokerIsAcceptedAndListsItsPartitions) {
  BrokerEpoch first = register_ok(1);  // fenced: no session to protect
  running_broker(2);
  Uuid topic = topic_led_by("t", 1, {NodeId(1), NodeId(2)});
  auto decision = control_.register_broker(now_, image_, registration(1, 2), next_offset_);
  auto& d = std::get<RegistrationDecision>(decision);
  EXPECT_GT(d.epoch, first);
  EXPECT_EQ(d.work.led, (std::vector<PartitionKey>{{topic, PartitionId(0)}}));
  EXPECT_EQ(d.work.in_isr, (std::vector<PartitionKey>{{topic, PartitionId(0)}}));
}

// Records name the epoch the broker will have when they apply: decisions
// planned after a registration that is still in flight see it.
TEST_F(ClusterControlTest, DecisionsSeeRegistrationsStillInFlight) {
  BrokerEpoch old_epoch = register_ok(1);  // fenced: may be replaced
  auto decision = control_.register_broker(now_, image_, registration(1, 2), next_offset_);
  const BrokerEpoch new_epoch = std::get<RegistrationDecision>(decision).epoch;
  // The old incarnation's heartbeat: stale, not an unfence of the old epoch.
  EXPECT_EQ(heartbeat_error(1, old_epoch).code, ErrorCode::kStaleBrokerEpoch);
  auto unregistered = control_.unregister_broker(image_, NodeId(1));
  EXPECT_EQ(std::get<UnregisterBrokerRecord>(std::get<FencingDecision>(unregistered).records.at(0)).broker_epoch,
            new_epoch);
  // In planning order the log applies cleanly.
  commit(std::get<RegistrationDecision>(decision).records);
  commit(std::get<FencingDecision>(unregistered).records);
  EXPECT_EQ(image_.broker(NodeId(1)), nullptr);
  auto gone = control_.unregister_broker(image_, NodeId(1));
  EXPECT_EQ(std::get<LifecycleError>(gone).code, ErrorCode::kBrokerIdNotRegistered);
}

TEST_F(ClusterControlTest, EpochsOnlyGrowEvenFromAStaleOffset) {
  next_offset_ = Offset(50);
  BrokerEpoch first = register_ok(1);
  auto decision = control_.register_broker(now_, image_, registration(1, 2), Offset(3));  // a stale offset
  EXPECT_GT(std::get<RegistrationDecision>(decision).epoch, first);
}

TEST_F(ClusterControlTest, ClusterIdMismatchIsInconsistentClusterId) {
  BrokerRegistrationEvent request = registration(1);
  request.cluster_id = "cluster-b";
  auto refused = control_.register_broker(now_, image_, request, next_offset_);
  const auto& e = std::get<LifecycleError>(refused);
  EXPECT_EQ(e.code, ErrorCode::kInconsistentClusterId);
  EXPECT_EQ(e.message, "Expected cluster ID cluster-a, but got cluster ID cluster-b");
}

TEST_F(ClusterControlTest, HeartbeatWithAStaleEpochIsRefused) {
  LifecycleError unknown = heartbeat_error(7, BrokerEpoch(3));
  EXPECT_EQ(unknown.code, ErrorCode::kStaleBrokerEpoch);
  EXPECT_EQ(unknown.message, "No broker registration found for broker id 7");
  BrokerEpoch epoch = register_ok(1);
  LifecycleError stale = heartbeat_error(1, epoch - 1);
  EXPECT_EQ(stale.code, ErrorCode::kStaleBrokerEpoch);
  EXPECT_EQ(stale.message, "Expected broker epoch " + std::to_string(epoch.value()) + ", but got broker epoch " +
                               std::to_string(epoch.value() - 1));
}

TEST_F(ClusterControlTest, UnfencedOnlyOnceCaughtUpWithItsRegistrationAndAsking) {
  next_offset_ = Offset(10);
  BrokerEpoch epoch = register_ok(1);  // at offset 10
  HeartbeatDecision behind = heartbeat_ok(1, epoch, Offset(9));
  EXPECT_TRUE(behind.is_fenced);
  EXPECT_FALSE(behind.is_caught_up);
  EXPECT_TRUE(behind.records.empty());

  HeartbeatDecision not_asking = heartbeat_ok(1, epoch, Offset(10), /*want_fence=*/true);
  EXPECT_TRUE(not_asking.is_fenced);
  EXPECT_TRUE(not_asking.is_caught_up);
  EXPECT_TRUE(not_asking.records.empty());

  auto decision = control_.heartbeat(now_, image_, {NodeId(1), epoch, Offset(10), false, false}, next_offset_);
  auto& unfence = std::get<HeartbeatDecision>(decision);
  EXPECT_FALSE(unfence.is_fenced);
  ASSERT_EQ(unfence.records.size(), 1u);
  const auto& change = std::get<BrokerRegistrationChangeRecord>(unfence.records[0]);
  EXPECT_EQ(change.fenced, Fencing::kUnfence);
  EXPECT_EQ(change.broker_epoch, epoch);
  EXPECT_FALSE(image_.broker_active(NodeId(1)));  // not committed yet
  commit(unfence.records);
  EXPECT_TRUE(image_.broker_active(NodeId(1)));
  EXPECT_TRUE(control_.is_eligible_leader(image_, NodeId(1)));
  // Planned once: the next heartbeat changes nothing.
  EXPECT_TRUE(heartbeat_ok(1, epoch, Offset(12)).records.empty());
}

TEST_F(ClusterControlTest, UnfencingListsTheLeaderlessPartitionsItHolds) {
  BrokerEpoch epoch = register_ok(1);
  Uuid topic = incarnation(200);
  commit({TopicRecord{"orphan", topic},
          PartitionRecord{topic, PartitionId(0), {NodeId(1)}, {}, kNoNode, LeaderEpoch(1), 1}});
  HeartbeatDecision d = heartbeat_ok(1, epoch, next_offset_);
  EXPECT_FALSE(d.is_fenced);
  EXPECT_EQ(d.work.leaderless, (std::vector<PartitionKey>{{topic, PartitionId(0)}}));
}

TEST_F(ClusterControlTest, AMissedSessionFencesTheBrokerAndListsItsLeaderships) {
  BrokerEpoch epoch = running_broker(1);
  running_broker(2);
  Uuid topic = topic_led_by("t", 1, {NodeId(1), NodeId(2)});
  const int64_t last = now_;
  EXPECT_EQ(control_.next_check_ms(), last + 9001);
  now_ = last + 8000;
  heartbeat_ok(2, image_.broker(NodeId(2))->epoch, next_offset_);  // broker 2 stays alive

  now_ = last + 9000;
  EXPECT_FALSE(control_.fence_stale_broker(now_, image_).has_value());
  now_ = last + 9001;
  auto fenced = control_.fence_stale_broker(now_, image_);
  ASSERT_TRUE(fenced.has_value());
  ASSERT_EQ(fenced->records.size(), 1u);
  const auto& change = std::get<BrokerRegistrationChangeRecord>(fenced->records[0]);
  EXPECT_EQ(change.broker_id, NodeId(1));
  EXPECT_EQ(change.broker_epoch, epoch);
  EXPECT_EQ(change.fenced, Fencing::kFence);
  EXPECT_EQ(fenced->work.led, (std::vector<PartitionKey>{{topic, PartitionId(0)}}));
  // Not eligible from the decision on, before the record commits.
  EXPECT_FALSE(control_.is_eligible_leader(image_, NodeId(1)));
  EXPECT_TRUE(control_.is_eligible_leader(image_, NodeId(2)));
  // Planned once.
  EXPECT_FALSE(control_.fence_stale_broker(now_, image_).has_value());
  commit(fenced->records);
  EXPECT_TRUE(image_.broker(NodeId(1))->fenced);
  EXPECT_EQ(control_.next_check_ms(), last + 8000 + 9001);  // broker 2's

  // It comes back: caught up, it is unfenced again with the same epoch.
  HeartbeatDecision back = heartbeat_ok(1, epoch, next_offset_);
  EXPECT_FALSE(back.is_fenced);
  EXPECT_TRUE(image_.broker_active(NodeId(1)));
}

TEST_F(ClusterControlTest, StaleBrokersAreFencedOneAtATimeOldestFirst) {
  running_broker(1);
  now_ += 100;
  running_broker(2);
  now_ += 20000;
  auto first = control_.fence_stale_broker(now_, image_);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->work.broker, NodeId(1));
  auto second = control_.fence_stale_broker(now_, image_);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->work.broker, NodeId(2));
  EXPECT_FALSE(control_.fence_stale_broker(now_, image_).has_value());
}

TEST_F(ClusterControlTest, ActivationGivesEveryBrokerAFullSession) {
  running_broker(1);
  ClusterControl fresh(ClusterControlConfig{"cluster-a", 9000});
  fresh.activate(now_ + 50000, image_);
  EXPECT_FALSE(fresh.fence_stale_broker(now_ + 59000, image_).has_value());
  EXPECT_TRUE(fresh.fence_stale_broker(now_ + 59001, image_).has_value());
}

TEST_F(ClusterControlTest, WantFenceFencesARunningBroker) {
  BrokerEpoch epoch = running_broker(1);
  HeartbeatDecision d = heartbeat_ok(1, epoch, next_offset_, /*want_fence=*/true);
  EXPECT_TRUE(d.is_fenced);
  EXPECT_FALSE(d.should_shut_down);
  EXPECT_TRUE(image_.broker(NodeId(1))->fenced);
}

TEST_F(ClusterControlTest, ControlledShutdownWaitsUntilItLeadsNothing) {
  BrokerEpoch epoch = running_broker(1);
  BrokerEpoch other = running_broker(2);
  Uuid topic = topic_led_by("t", 1, {NodeId(1), NodeId(2)});

  HeartbeatDecision asked = heartbeat_ok(1, epoch, next_offset_, false, /*want_shut_down=*/true);
  EXPECT_TRUE(asked.in_controlled_shutdown);
  EXPECT_FALSE(asked.should_shut_down);
  EXPECT_FALSE(asked.is_fenced);
  ASSERT_EQ(asked.records.size(), 1u);
  EXPECT_TRUE(std::get<BrokerRegistrationChangeRecord>(asked.records[0]).in_controlled_shutdown);
  EXPECT_EQ(asked.work.led, (std::vector<PartitionKey>{{topic, PartitionId(0)}}));
  EXPECT_TRUE(image_.broker(NodeId(1))->in_controlled_shutdown);
  EXPECT_FALSE(control_.is_eligible_leader(image_, NodeId(1)));

  // Still leading: not yet, though every other broker has caught up.
  heartbeat_ok(2, other, next_offset_ + 10);
  HeartbeatDecision waiting = heartbeat_ok(1, epoch, next_offset_, false, true);
  EXPECT_FALSE(waiting.should_shut_down);
  EXPECT_TRUE(waiting.records.empty());

  // The replication work moved the leadership away.
  commit({PartitionRecord{topic, PartitionId(0), {NodeId(1), NodeId(2)}, {NodeId(2)}, NodeId(2), LeaderEpoch(1), 1}});
  // Broker 2 has not replayed past the controlled-shutdown record yet.
  heartbeat_ok(2, other, Offset(0));
  EXPECT_FALSE(heartbeat_ok(1, epoch, next_offset_, false, true).should_shut_down);
  heartbeat_ok(2, other, next_offset_);
  HeartbeatDecision done = heartbeat_ok(1, epoch, next_offset_, false, true);
  EXPECT_TRUE(done.should_shut_down);
  EXPECT_TRUE(done.is_fenced);
  EXPECT_TRUE(image_.broker(NodeId(1))->fenced);
}

// A metadata offset names a batch: a broker that replayed the batch holding
// the controlled-shutdown record has seen it, though no batch follows.
TEST_F(ClusterControlTest, ControlledShutdownEndsOnceOthersReplayedItsBatch) {
  BrokerEpoch epoch = running_broker(1);
  BrokerEpoch other = running_broker(2);
  Uuid topic = topic_led_by("t", 1, {NodeId(1), NodeId(2)});
  const Offset batch = next_offset_;
  HeartbeatDecision asked = heartbeat_ok(1, epoch, batch, false, /*want_shut_down=*/true);
  ASSERT_TRUE(asked.in_controlled_shutdown);
  commit({PartitionChangeRecord{topic, PartitionId(0), std::vector<NodeId>{NodeId(2)}, NodeId(2)}});
  heartbeat_ok(2, other, batch);
  EXPECT_TRUE(heartbeat_ok(1, epoch, batch, false, true).should_shut_down);
}

TEST_F(ClusterControlTest, ShutdownWithoutLeadershipsIsImmediate) {
  BrokerEpoch epoch = running_broker(1);
  HeartbeatDecision d = heartbeat_ok(1, epoch, next_offset_, false, true);
  EXPECT_TRUE(d.should_shut_down);
  EXPECT_TRUE(d.is_fenced);
  EXPECT_FALSE(d.in_controlled_shutdown);

  BrokerEpoch fenced = register_ok(3);
  HeartbeatDecision f = heartbeat_ok(3, fenced, Offset(0), true, true);
  EXPECT_TRUE(f.should_shut_down);
  EXPECT_TRUE(f.records.empty());  // already fenced
}

TEST_F(ClusterControlTest, UnregisterRemovesTheBroker) {
  auto unknown = control_.unregister_broker(image_, NodeId(4));
  EXPECT_EQ(std::get<LifecycleError>(unknown).code, ErrorCode::kBrokerIdNotRegistered);
  EXPECT_EQ(std::get<LifecycleError>(unknown).message, "Broker ID 4 is not currently registered");

  BrokerEpoch epoch = running_broker(4);
  auto decision = control_.unregister_broker(image_, NodeId(4));
  auto& d = std::get<FencingDecision>(decision);
  ASSERT_EQ(d.records.size(), 1u);
  EXPECT_EQ(std::get<UnregisterBrokerRecord>(d.records[0]).broker_epoch, epoch);
  commit(d.records);
  EXPECT_EQ(image_.broker(NodeId(4)), nullptr);
  EXPECT_EQ(control_.registration_offset(NodeId(4)), kNoOffset);
  EXPECT_EQ(heartbeat_error(4, epoch).code, ErrorCode::kStaleBrokerEpoch);
  EXPECT_EQ(control_.next_check_ms(), INT64_MAX);
}

TEST_F(ClusterControlTest, WireRequestsAndAnswers) {
  protocol::BrokerRegistrationRequest request;
  request.broker_id = 3;
  request.cluster_id = "cluster-a";
  request.incarnation_id = incarnation(9);
  request.listeners.push_back({"SSL", "h", 9093, 1});
  request.rack = "r1";
  BrokerRegistrationEvent event = registration_from_wire(request);
  EXPECT_EQ(event.broker_id, NodeId(3));
  EXPECT_EQ(event.listeners.at(0), (BrokerEndpoint{"SSL", "h", 9093, 1}));
  EXPECT_EQ(event.rack, "r1");
  EXPECT_EQ(registration_response(BrokerEpoch(12)).broker_epoch, 12);

  protocol::BrokerHeartbeatRequest hb;
  hb.broker_id = 3;
  hb.broker_epoch = 12;
  hb.current_metadata_offset = 40;
  hb.want_fence = false;
  hb.want_shut_down = true;
  BrokerHeartbeatEvent e = heartbeat_from_wire(hb);
  EXPECT_EQ(e.broker_epoch, BrokerEpoch(12));
  EXPECT_EQ(e.current_metadata_offset, Offset(40));
  EXPECT_TRUE(e.want_shut_down);
  protocol::BrokerHeartbeatResponse refused = heartbeat_response(LifecycleError{ErrorCode::kStaleBrokerEpoch, ""});
  EXPECT_EQ(refused.error_code, int16_t(ErrorCode::kStaleBrokerEpoch));
  EXPECT_TRUE(refused.is_fenced);
  EXPECT_EQ(unregister_response(nullptr).error_message, std::nullopt);
}

}  // namespace
}  // namespace samsa

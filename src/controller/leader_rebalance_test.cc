// ElectLeaders and the preferred-leader rebalance, with the cases of Kafka's
// ReplicationControlManagerTest (testPreferredElection, testElectionNotNeeded,
// testUncleanElection...) and QuorumControllerTest's balancing.
#include "controller/leader_rebalance.h"

#include <gtest/gtest.h>

namespace samsa {
namespace {

using protocol::ErrorCode;
using Fencing = BrokerRegistrationChangeRecord::Fencing;

const Uuid kTopic{{7, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}};

std::vector<NodeId> ids(std::initializer_list<int> list) {
  std::vector<NodeId> out;
  for (int id : list) out.push_back(NodeId(id));
  return out;
}

// Brokers 1-3 active; topic "t" with one partition per entry of `parts`
// (replicas, ISR, leader).
struct Part {
  std::vector<NodeId> replicas, isr;
  int leader;
};
MetadataImage image(const std::vector<Part>& parts) {
  MetadataImage m;
  for (int id = 1; id <= 3; ++id) {
    m.apply(RegisterBrokerRecord{NodeId(id), BrokerEpoch(10 * id), {}, {{"PLAINTEXT", "h", 9092, 0}}, std::nullopt,
                                 false});
  }
  m.apply(TopicRecord{"t", kTopic});
  for (size_t i = 0; i < parts.size(); ++i) {
    m.apply(PartitionRecord{kTopic, PartitionId(int32_t(i)), parts[i].replicas, parts[i].isr,
                            NodeId(parts[i].leader), LeaderEpoch(3), 5});
  }
  return m;
}

std::optional<std::vector<ElectionRequestTopic>> only(int32_t partition) {
  return std::vector<ElectionRequestTopic>{{"t", {partition}}};
}

const PartitionState& partition(const MetadataImage& m, int i) { return m.topic("t")->partitions[size_t(i)]; }

TEST(LeaderRebalance, APreferredElectionGivesLeadershipBackToTheFirstReplica) {
  MetadataImage m = image({{ids({1, 2, 3}), ids({1, 2, 3}), 2}});
  ElectionPlan plan = plan_elections(m, ElectionType::kPreferred, only(0), ElectionPolicy{});
  ASSERT_EQ(plan.results.size(), 1u);
  EXPECT_EQ(plan.results[0].error, ErrorCode::kNone);
  ASSERT_EQ(plan.records.size(), 1u);
  m.apply(plan.records[0]);
  EXPECT_EQ(partition(m, 0).leader, NodeId(1));
  EXPECT_EQ(partition(m, 0).leader_epoch, LeaderEpoch(4));
  EXPECT_EQ(partition(m, 0).isr, ids({1, 2, 3}));
}

TEST(LeaderRebalance, APreferredLeaderThatLeadsNeedsNoElection) {
  MetadataImage m = image({{ids({1, 2, 3}), ids({1, 2, 3}), 1}});
  ElectionPlan plan = plan_elections(m, ElectionType::kPreferred, only(0), ElectionPolicy{});
  EXPECT_TRUE(plan.records.empty());
  EXPECT_EQ(plan.results.at(0).error, ErrorCode::kElectionNotNeeded);
}

TEST(LeaderRebalance, APreferredReplicaOutsideTheIsrOrFencedIsNotAvailable) {
  MetadataImage m = image({{ids({1, 2, 3}), ids({2, 3}), 2}, {ids({3, 1, 2}), ids({1, 2, 3}), 1}});
  m.apply(BrokerRegistrationChangeRecord{NodeId(3), BrokerEpoch(30), Fencing::kFence, false});
  auto requested = std::vector<ElectionRequestTopic>{{"t", {0, 1}}};
  ElectionPlan plan = plan_elections(m, ElectionType::kPreferred, requested, ElectionPolicy{});
  EXPECT_TRUE(plan.records.empty());
  EXPECT_EQ(plan.results.at(0).error, ErrorCode::kPreferredLeaderNotAvailable);  // 1 is not in the ISR
  EXPECT_EQ(plan.results.at(1).error, ErrorCode::kPreferredLeaderNotAvailable);  // 3 is fenced
}

TEST(LeaderRebalance, AnUnknownTopicOrPartitionIsAnsweredAsSuch) {
  MetadataImage m = image({{ids({1, 2, 3}), ids({1, 2, 3}), 2}});
  auto requested = std::vector<ElectionRequestTopic>{{"t", {5, -1}}, {"nope", {0}}};
  ElectionPlan plan = plan_elections(m, ElectionType::kPreferred, requested, ElectionPolicy{});
  ASSERT_EQ(plan.results.size(), 3u);
  for (const auto& r : plan.results) EXPECT_EQ(r.error, ErrorCode::kUnknownTopicOrPartition) << r.topic;
  EXPECT_TRUE(plan.records.empty());
}

TEST(LeaderRebalance, APartitionNamedTwiceIsElectedOnce) {
  MetadataImage m = image({{ids({1, 2, 3}), ids({1, 2, 3}), 2}});
  auto requested = std::vector<ElectionRequestTopic>{{"t", {0, 0}}};
  ElectionPlan plan = plan_elections(m, ElectionType::kPreferred, requested, ElectionPolicy{});
  EXPECT_EQ(plan.records.size(), 1u);
  EXPECT_EQ(plan.results.at(0).error, ErrorCode::kNone);
  EXPECT_EQ(plan.results.at(1).error, ErrorCode::kElectionNotNeeded);
}

TEST(LeaderRebalance, AllPartitionsLeavesOutThoseThatNeedNoElection) {
  MetadataImage m = image({{ids({1, 2, 3}), ids({1, 2, 3}), 1}, {ids({2, 3, 1}), ids({1, 2, 3}), 1}});
  ElectionPlan plan = plan_elections(m, ElectionType::kPreferred, std::nullopt, ElectionPolicy{});
  ASSERT_EQ(plan.results.size(), 1u);
  EXPECT_EQ(plan.results[0].partition, 1);
  EXPECT_EQ(plan.records.size(), 1u);
}

TEST(LeaderRebalance, AnUncleanElectionOnlyTouchesLeaderlessPartitions) {
  // Partition 0 leads; partition 1's ISR holds only fenced broker 3, replica 2 is live.
  MetadataImage m = image({{ids({1, 2, 3}), ids({1, 2, 3}), 1}, {ids({3, 2}), ids({3}), -1}});
  m.apply(BrokerRegistrationChangeRecord{NodeId(3), BrokerEpoch(30), Fencing::kFence, false});
  auto requested = std::vector<ElectionRequestTopic>{{"t", {0, 1}}};
  ElectionPlan plan = plan_elections(m, ElectionType::kUnclean, requested, ElectionPolicy{});
  EXPECT_EQ(plan.results.at(0).error, ErrorCode::kElectionNotNeeded);
  EXPECT_EQ(plan.results.at(1).error, ErrorCode::kNone);
  ASSERT_EQ(plan.records.size(), 1u);
  m.apply(plan.records[0]);
  EXPECT_EQ(partition(m, 1).leader, NodeId(2));
  EXPECT_EQ(partition(m, 1).isr, ids({2}));
}

TEST(LeaderRebalance, AnUncleanElectionWithNoLiveReplicaFindsNoEligibleLeader) {
  MetadataImage m = image({{ids({3}), ids({3}), -1}});
  m.apply(BrokerRegistrationChangeRecord{NodeId(3), BrokerEpoch(30), Fencing::kFence, false});
  ElectionPlan plan = plan_elections(m, ElectionType::kUnclean, only(0), ElectionPolicy{});
  EXPECT_TRUE(plan.records.empty());
  EXPECT_EQ(plan.results.at(0).error, ErrorCode::kEligibleLeadersNotAvailable);
}

TEST(LeaderRebalance, TheRebalancePicksOnlyCaughtUpPreferredReplicasOfImbalancedBrokers) {
  // Broker 1 is preferred for 0, 1 and 2 and leads none: 100 % imbalance.
  // Partition 2's ISR lacks broker 1 (it has not caught up): not moved.
  // Broker 2 is preferred for 3 and leads it.
  MetadataImage m = image({{ids({1, 2, 3}), ids({1, 2, 3}), 2},
                           {ids({1, 3, 2}), ids({1, 2, 3}), 3},
                           {ids({1, 2, 3}), ids({2, 3}), 2},
                           {ids({2, 1, 3}), ids({1, 2, 3}), 2}});
  auto chosen = partitions_to_rebalance(m, 10);
  ASSERT_EQ(chosen.size(), 1u);
  EXPECT_EQ(chosen[0].topic, "t");
  EXPECT_EQ(chosen[0].partitions, (std::vector<int32_t>{0, 1}));
}

TEST(LeaderRebalance, ABrokerWithinTheImbalanceBoundIsLeftAlone) {
  // Broker 1 is preferred for 11 partitions and leads 10 of them: 9 % <= 10 %.
  std::vector<Part> parts;
  for (int i = 0; i < 11; ++i) parts.push_back({ids({1, 2, 3}), ids({1, 2, 3}), i == 0 ? 2 : 1});
  EXPECT_TRUE(partitions_to_rebalance(image(parts), 10).empty());
  EXPECT_EQ(partitions_to_rebalance(image(parts), 5).size(), 1u);
}

}  // namespace
}  // namespace samsa

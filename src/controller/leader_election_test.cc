// Elections on the controller, with the cases of Kafka's
// PartitionChangeBuilderTest and ReplicationControlManagerTest
// (testElectAnyLeader, testUncleanLeaderElection, handleBrokerFenced,
// handleBrokerUnfenced, the last ISR member staying).
#include "controller/leader_election.h"

#include <gtest/gtest.h>

namespace samsa {
namespace {

using Fencing = BrokerRegistrationChangeRecord::Fencing;

const Uuid kTopic{{9, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}};
const PartitionKey kKey{kTopic, PartitionId(0)};

std::vector<NodeId> ids(std::initializer_list<int> list) {
  std::vector<NodeId> out;
  for (int id : list) out.push_back(NodeId(id));
  return out;
}

// Brokers 1-4 active; "t"-0 on replicas [1, 2, 3], with the ISR and leader given.
MetadataImage image(std::vector<NodeId> isr, int leader, bool unclean = false) {
  MetadataImage m;
  for (int id = 1; id <= 4; ++id) {
    m.apply(RegisterBrokerRecord{NodeId(id), BrokerEpoch(10 * id), {}, {{"PLAINTEXT", "h", 9092, 0}}, std::nullopt,
                                 false});
  }
  m.apply(TopicRecord{"t", kTopic});
  m.apply(PartitionRecord{kTopic, PartitionId(0), ids({1, 2, 3}), isr, NodeId(leader), LeaderEpoch(5), 9});
  if (unclean) m.apply(ConfigRecord{ConfigRecord::Resource::kTopic, "t", "unclean.leader.election.enable", "true"});
  return m;
}

BrokerRegistrationChangeRecord fence(int id) { return {NodeId(id), BrokerEpoch(10 * id), Fencing::kFence, false}; }

LeadershipWork departure(int broker, bool led) {
  LeadershipWork w;
  w.broker = NodeId(broker);
  w.in_isr = {kKey};
  if (led) w.led = {kKey};
  return w;
}

const PartitionState& partition(const MetadataImage& m) { return m.topic("t")->partitions[0]; }

// Applies the planned records; returns them.
std::vector<MetadataRecord> run(MetadataImage& m, const std::vector<MetadataRecord>& decision,
                                const LeadershipWork& work, ElectionPolicy policy = {}) {
  std::vector<MetadataRecord> records = plan_leadership_work(m, decision, work, policy);
  for (const auto& r : decision) m.apply(r);
  for (const auto& r : records) m.apply(r);
  return records;
}

TEST(LeaderElection, AFencedLeaderIsReplacedByTheFirstIsrReplicaInAssignmentOrder) {
  MetadataImage m = image(ids({1, 2, 3}), 1);
  auto records = run(m, {fence(1)}, departure(1, true));
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(partition(m).leader, NodeId(2));
  EXPECT_EQ(partition(m).isr, ids({2, 3}));
  EXPECT_EQ(partition(m).leader_epoch, LeaderEpoch(6));  // a new leader: epoch + 1
  EXPECT_EQ(partition(m).partition_epoch, 10);
}

TEST(LeaderElection, AFencedFollowerOnlyLeavesTheIsrAndTheLeaderEpochStays) {
  MetadataImage m = image(ids({1, 2, 3}), 1);
  run(m, {fence(3)}, departure(3, false));
  EXPECT_EQ(partition(m).leader, NodeId(1));
  EXPECT_EQ(partition(m).isr, ids({1, 2}));
  EXPECT_EQ(partition(m).leader_epoch, LeaderEpoch(5));
  EXPECT_EQ(partition(m).partition_epoch, 10);
}

TEST(LeaderElection, WithoutElrTheLastIsrMemberStaysAndThePartitionGoesLeaderless) {
  MetadataImage m = image(ids({1}), 1);
  run(m, {fence(1)}, departure(1, true), ElectionPolicy{.elr_enabled = false});
  EXPECT_EQ(partition(m).leader, kNoNode);
  EXPECT_EQ(partition(m).isr, ids({1})) << "without ELR the ISR is never emptied";
  EXPECT_EQ(partition(m).leader_epoch, LeaderEpoch(6));
}

TEST(LeaderElection, CleanElectionNeverPicksAReplicaOutsideTheIsr) {
  // 2 and 3 are alive but out of the ISR; 1, the only ISR member, dies.
  MetadataImage m = image(ids({1}), 1);
  run(m, {fence(1)}, departure(1, true));
  EXPECT_EQ(partition(m).leader, kNoNode);
}

TEST(LeaderElection, UncleanElectionPicksTheFirstLiveReplicaAndMakesItTheWholeIsrRecovering) {
  MetadataImage m = image(ids({1}), 1, /*unclean=*/true);
  auto records = run(m, {fence(1)}, departure(1, true));
  ASSERT_EQ(records.size(), 1u);
  const auto& change = std::get<PartitionChangeRecord>(records[0]);
  EXPECT_EQ(change.leader, NodeId(2));
  EXPECT_EQ(change.isr, ids({2}));
  EXPECT_EQ(change.leader_recovery_state, 1);
  EXPECT_EQ(partition(m).leader, NodeId(2));
  EXPECT_EQ(partition(m).isr, ids({2}));
  // The broker default turns it on for topics without their own setting.
  MetadataImage d = image(ids({1}), 1);
  run(d, {fence(1)}, departure(1, true), ElectionPolicy{.unclean_default = true});
  EXPECT_EQ(partition(d).leader, NodeId(2));
}

TEST(LeaderElection, ControlledShutdownAndUnregistrationMoveLeadershipToo) {
  MetadataImage m = image(ids({1, 2, 3}), 2);
  run(m, {BrokerRegistrationChangeRecord{NodeId(2), BrokerEpoch(20), Fencing::kNone, true}}, departure(2, true));
  EXPECT_EQ(partition(m).leader, NodeId(1));
  EXPECT_EQ(partition(m).isr, ids({1, 3}));

  MetadataImage u = image(ids({1, 3}), 1);
  run(u, {UnregisterBrokerRecord{NodeId(1), BrokerEpoch(10)}}, departure(1, true));
  EXPECT_EQ(partition(u).leader, NodeId(3));
  EXPECT_EQ(partition(u).isr, ids({3}));
}

TEST(LeaderElection, AnUnfencedBrokerLeadsTheLeaderlessPartitionsItIsInTheIsrOf) {
  MetadataImage m = image(ids({1}), 1);
  run(m, {fence(1)}, departure(1, true));
  ASSERT_EQ(partition(m).leader, kNoNode);
  LeadershipWork arrival;
  arrival.broker = NodeId(1);
  arrival.leaderless = {kKey};
  auto records = run(m, {BrokerRegistrationChangeRecord{NodeId(1), BrokerEpoch(10), Fencing::kUnfence, false}},
                     arrival);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(partition(m).leader, NodeId(1));
  EXPECT_EQ(partition(m).isr, ids({1}));
  EXPECT_EQ(partition(m).leader_epoch, LeaderEpoch(7));

  // A broker outside the ISR coming back does not lead it.
  MetadataImage n = image(ids({1}), 1);
  run(n, {fence(1)}, departure(1, true));
  LeadershipWork other;
  other.broker = NodeId(2);
  other.leaderless = {kKey};
  EXPECT_TRUE(run(n, {}, other).empty());
  EXPECT_EQ(partition(n).leader, kNoNode);
}

TEST(LeaderElection, NothingChangedWritesNoRecord) {
  MetadataImage m = image(ids({1, 2}), 1);
  // Broker 3 is not in the ISR: its fencing changes nothing here.
  EXPECT_TRUE(plan_leadership_work(m, {fence(3)}, departure(3, false), ElectionPolicy{}).empty());
  EXPECT_FALSE(build_partition_change(kTopic, partition(m), ids({1, 2}), PartitionRules{},
                                      [](NodeId) { return true; }));
}

TEST(LeaderElection, TheCurrentLeaderStaysWhileValidEvenIfNotPreferred) {
  MetadataImage m = image(ids({1, 2, 3}), 3);
  auto change = build_partition_change(kTopic, partition(m), ids({1, 3}), PartitionRules{},
                                       [](NodeId) { return true; });
  ASSERT_TRUE(change);
  EXPECT_EQ(change->leader, PartitionChangeRecord::kNoLeaderChange);
  EXPECT_EQ(change->isr, ids({1, 3}));
}

// --- Eligible leader replicas (KIP-966), RF 3 and min.insync.replicas 2 ---

const ElectionPolicy kMinIsr2{.min_isr_default = 2};

BrokerRegistrationChangeRecord unfence(int id) { return {NodeId(id), BrokerEpoch(10 * id), Fencing::kUnfence, false}; }

LeadershipWork arrival(int broker) {
  LeadershipWork w;
  w.broker = NodeId(broker);
  w.leaderless = {kKey};
  return w;
}

// 3, then 2, then the leader 1 are fenced, as the KIP's scenario.
MetadataImage lose_the_whole_isr(ElectionPolicy policy = kMinIsr2) {
  MetadataImage m = image(ids({1, 2, 3}), 1);
  run(m, {fence(3)}, departure(3, false), policy);
  run(m, {fence(2)}, departure(2, false), policy);
  run(m, {fence(1)}, departure(1, true), policy);
  return m;
}

TEST(EligibleLeaders, LeavingTheIsrAtOrAboveMinIsrMakesNoEligibleLeader) {
  MetadataImage m = image(ids({1, 2, 3}), 1);
  run(m, {fence(3)}, departure(3, false), kMinIsr2);
  EXPECT_EQ(partition(m).isr, ids({1, 2}));
  EXPECT_TRUE(partition(m).elr.empty()) << "the HW may pass 3's log end once the ISR is [1, 2]";
}

TEST(EligibleLeaders, LeavingTheIsrBelowMinIsrJoinsTheElr) {
  MetadataImage m = image(ids({1, 2, 3}), 1);
  run(m, {fence(3)}, departure(3, false), kMinIsr2);
  run(m, {fence(2)}, departure(2, false), kMinIsr2);
  EXPECT_EQ(partition(m).isr, ids({1}));
  EXPECT_EQ(partition(m).elr, ids({2}));
  EXPECT_TRUE(partition(m).last_known_elr.empty());
}

TEST(EligibleLeaders, TheLastIsrMemberLeavesItForTheElrAndThePartitionIsLeaderless) {
  MetadataImage m = lose_the_whole_isr();
  EXPECT_EQ(partition(m).leader, kNoNode);
  EXPECT_TRUE(partition(m).isr.empty()) << "with ELR the ISR may be empty";
  EXPECT_EQ(partition(m).elr, ids({1, 2}));
}

TEST(EligibleLeaders, AnElrMemberComingBackLeadsAndBecomesTheIsr) {
  MetadataImage m = lose_the_whole_isr();
  auto records = run(m, {unfence(2)}, arrival(2), kMinIsr2);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(partition(m).leader, NodeId(2));
  EXPECT_EQ(partition(m).isr, ids({2}));
  EXPECT_EQ(partition(m).elr, ids({1})) << "1 is still eligible; ELR and ISR stay disjoint";
  EXPECT_EQ(std::get<PartitionChangeRecord>(records[0]).leader_recovery_state, -1) << "a clean election";
}

TEST(EligibleLeaders, AReplicaOutsideIsrAndElrDoesNotLead) {
  MetadataImage m = lose_the_whole_isr();
  EXPECT_TRUE(run(m, {unfence(3)}, arrival(3), kMinIsr2).empty());
  EXPECT_EQ(partition(m).leader, kNoNode) << "3 left the ISR while it was at min ISR: it may miss records";
}

TEST(EligibleLeaders, WithoutElrNoReplicaButTheLastIsrMemberLeads) {
  ElectionPolicy off = kMinIsr2;
  off.elr_enabled = false;
  MetadataImage m = lose_the_whole_isr(off);
  EXPECT_EQ(partition(m).isr, ids({1}));
  EXPECT_TRUE(partition(m).elr.empty());
  EXPECT_TRUE(run(m, {unfence(2)}, arrival(2), off).empty());
  EXPECT_EQ(partition(m).leader, kNoNode) << "without ELR the partition waits for broker 1";
}

LeadershipWork unclean_restart(int broker) {
  LeadershipWork w;
  w.broker = NodeId(broker);
  w.unclean_shutdown = true;
  w.eligible = {kKey};
  return w;
}

TEST(EligibleLeaders, AnUncleanShutdownLeavesTheElr) {
  MetadataImage m = lose_the_whole_isr();
  EXPECT_EQ(partition(m).last_known_elr, ids({1})) << "the leader when the ISR became empty";
  run(m, {}, unclean_restart(2), kMinIsr2);
  EXPECT_EQ(partition(m).elr, ids({1}));
  EXPECT_EQ(partition(m).last_known_elr, ids({1}));
  EXPECT_TRUE(run(m, {unfence(2)}, arrival(2), kMinIsr2).empty()) << "it may have lost unflushed records";
  EXPECT_EQ(partition(m).leader, kNoNode);
  run(m, {unfence(1)}, arrival(1), kMinIsr2);
  EXPECT_EQ(partition(m).leader, NodeId(1));
}

TEST(EligibleLeaders, WithIsrAndElrEmptyTheLastLeaderLeadsAgainAsAnUncleanElection) {
  MetadataImage m = lose_the_whole_isr();
  run(m, {}, unclean_restart(2), kMinIsr2);
  run(m, {}, unclean_restart(1), kMinIsr2);
  EXPECT_TRUE(partition(m).elr.empty());
  EXPECT_TRUE(run(m, {unfence(2)}, arrival(2), kMinIsr2).empty()) << "2 was not the last leader";
  auto records = run(m, {unfence(1)}, arrival(1), kMinIsr2);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(partition(m).leader, NodeId(1));
  EXPECT_EQ(partition(m).isr, ids({1}));
  EXPECT_EQ(std::get<PartitionChangeRecord>(records[0]).leader_recovery_state, 1);
  EXPECT_TRUE(partition(m).last_known_elr.empty()) << "cleared once it has a leader";
}

TEST(EligibleLeaders, TheIsrBackAtMinIsrClearsTheElrAndLastKnownElr) {
  MetadataImage m = lose_the_whole_isr();
  run(m, {unfence(2)}, arrival(2), kMinIsr2);
  PartitionRules rules{.min_isr = 2};
  auto change = build_partition_change(kTopic, partition(m), ids({2, 3}), rules, [](NodeId) { return true; });
  ASSERT_TRUE(change);
  EXPECT_EQ(change->elr, std::vector<NodeId>{});
  m.apply(*change);
  EXPECT_TRUE(partition(m).elr.empty());
  EXPECT_TRUE(partition(m).last_known_elr.empty());
}

TEST(EligibleLeaders, UncleanElectionOnlyWhenNoElrMemberCanLeadAndItClearsTheElr) {
  MetadataImage m = lose_the_whole_isr();
  m.apply(ConfigRecord{ConfigRecord::Resource::kTopic, "t", "unclean.leader.election.enable", "true"});
  auto records = run(m, {unfence(3)}, arrival(3), kMinIsr2);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(partition(m).leader, NodeId(3));
  EXPECT_EQ(std::get<PartitionChangeRecord>(records[0]).leader_recovery_state, 1);
  EXPECT_TRUE(partition(m).elr.empty());

  MetadataImage n = lose_the_whole_isr();
  n.apply(ConfigRecord{ConfigRecord::Resource::kTopic, "t", "unclean.leader.election.enable", "true"});
  n.apply(unfence(3));
  run(n, {unfence(2)}, arrival(2), kMinIsr2);
  EXPECT_EQ(partition(n).leader, NodeId(2)) << "an ELR member before any unclean choice";
}

TEST(EligibleLeaders, TheTopicsMinIsrWinsOverTheBrokerDefault) {
  MetadataImage m = image(ids({1, 2, 3}), 1);
  m.apply(ConfigRecord{ConfigRecord::Resource::kTopic, "t", "min.insync.replicas", "3"});
  run(m, {fence(3)}, departure(3, false), ElectionPolicy{});
  EXPECT_EQ(partition(m).elr, ids({3}));
}

}  // namespace
}  // namespace samsa

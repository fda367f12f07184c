#include "controller/topic_planner.h"

#include <gtest/gtest.h>

namespace samsa {
namespace {

using protocol::ErrorCode;

RegisterBrokerRecord unfenced_broker(int id, std::optional<std::string> rack) {
  return RegisterBrokerRecord{NodeId(id), BrokerEpoch(1), {}, {{"PLAINTEXT", "127.0.0.1", uint16_t(9090 + id), 0}},
                              std::move(rack), false};
}

MetadataImage image_with_brokers(int n) {
  MetadataImage image;
  for (int i = 1; i <= n; ++i) image.apply(unfenced_broker(i, std::nullopt));
  return image;
}

void apply_all(MetadataImage& image, const Plan& plan) {
  ASSERT_TRUE(std::holds_alternative<std::vector<MetadataRecord>>(plan));
  for (const auto& r : std::get<std::vector<MetadataRecord>>(plan)) image.apply(r);
}

ErrorCode error_of(const Plan& plan) {
  EXPECT_TRUE(std::holds_alternative<ControllerError>(plan));
  return std::get<ControllerError>(plan).code;
}

TEST(TopicPlanner, CreatesPartitionsWithLeaderAndIsr) {
  MetadataImage image = image_with_brokers(3);
  Rng rng(1);
  NewTopic t{"orders", 6, 2, {}, {{"retention.ms", "1000"}}};
  apply_all(image, plan_create_topic(image, t, TopicDefaults{}, PartitionLimits{}, rng));
  const TopicState* topic = image.topic("orders");
  ASSERT_NE(topic, nullptr);
  EXPECT_FALSE(topic->id.is_zero());
  ASSERT_EQ(topic->partitions.size(), 6u);
  std::map<NodeId, int> leaders;
  for (const auto& p : topic->partitions) {
    EXPECT_EQ(p.replicas.size(), 2u);
    EXPECT_EQ(p.isr, p.replicas);
    EXPECT_EQ(p.leader, p.replicas.front());
    leaders[p.leader]++;
  }
  EXPECT_EQ(leaders.size(), 3u);  // leadership spread over all brokers
  EXPECT_EQ(topic->configs.at("retention.ms"), "1000");
  EXPECT_EQ(image.topic_by_id(topic->id), topic);
}

TEST(TopicPlanner, RefusesWhatKafkaRefuses) {
  MetadataImage image = image_with_brokers(1);
  Rng rng(2);
  EXPECT_EQ(error_of(plan_create_topic(image, NewTopic{"bad name", 1, 1}, {}, PartitionLimits{}, rng)),
            ErrorCode::kInvalidTopicException);
  EXPECT_EQ(error_of(plan_create_topic(image, NewTopic{"t", 0, 1}, {}, PartitionLimits{}, rng)),
            ErrorCode::kInvalidPartitions);
  EXPECT_EQ(error_of(plan_create_topic(image, NewTopic{"t", 1, 3}, {}, PartitionLimits{}, rng)),
            ErrorCode::kInvalidReplicationFactor);
  apply_all(image, plan_create_topic(image, NewTopic{"t", -1, -1}, TopicDefaults{3, 1}, PartitionLimits{}, rng));
  EXPECT_EQ(image.topic("t")->partitions.size(), 3u);
  EXPECT_EQ(error_of(plan_create_topic(image, NewTopic{"t", 1, 1}, {}, PartitionLimits{}, rng)),
            ErrorCode::kTopicAlreadyExists);
  EXPECT_EQ(error_of(plan_create_partitions(image, "t", 2, {}, PartitionLimits{}, rng)), ErrorCode::kInvalidPartitions);
  EXPECT_EQ(error_of(plan_delete_topic(image, "nope")), ErrorCode::kUnknownTopicOrPartition);
}

TEST(TopicPlanner, GrowsAndDeletesTopics) {
  MetadataImage image = image_with_brokers(1);
  Rng rng(3);
  apply_all(image, plan_create_topic(image, NewTopic{"t", 2, 1}, {}, PartitionLimits{}, rng));
  apply_all(image, plan_create_partitions(image, "t", 5, {}, PartitionLimits{}, rng));
  EXPECT_EQ(image.topic("t")->partitions.size(), 5u);
  EXPECT_EQ(image.topic("t")->partitions[4].partition, PartitionId(4));
  apply_all(image, plan_alter_topic_configs(image, "t", {{"segment.bytes", "1024"}}));
  EXPECT_EQ(image.topic("t")->configs.at("segment.bytes"), "1024");
  apply_all(image, plan_alter_topic_configs(image, "t", {{"segment.bytes", std::nullopt}}));
  EXPECT_TRUE(image.topic("t")->configs.empty());
  apply_all(image, plan_delete_topic(image, "t"));
  EXPECT_EQ(image.topic("t"), nullptr);
  EXPECT_TRUE(image.topics().empty());
}

TEST(TopicPlanner, ManualAssignmentIsChecked) {
  MetadataImage image = image_with_brokers(2);
  Rng rng(4);
  NewTopic dup{"t", -1, -1, {{NodeId(1), NodeId(1)}}};
  EXPECT_EQ(error_of(plan_create_topic(image, dup, {}, PartitionLimits{}, rng)), ErrorCode::kInvalidReplicaAssignment);
  NewTopic unknown{"t", -1, -1, {{NodeId(7)}}};
  EXPECT_EQ(error_of(plan_create_topic(image, unknown, {}, PartitionLimits{}, rng)),
            ErrorCode::kInvalidReplicaAssignment);
  NewTopic ok{"t", -1, -1, {{NodeId(2), NodeId(1)}, {NodeId(1), NodeId(2)}}};
  apply_all(image, plan_create_topic(image, ok, {}, PartitionLimits{}, rng));
  EXPECT_EQ(image.topic("t")->partitions[0].leader, NodeId(2));
}

ControllerError refusal_of(const Plan& plan) {
  EXPECT_TRUE(std::holds_alternative<ControllerError>(plan));
  return std::holds_alternative<ControllerError>(plan) ? std::get<ControllerError>(plan) : ControllerError{};
}

// Issue 10 item 1: a 2^31-1 partition count was planned record by record
// (gigabytes, seconds of the loop); now it is refused before any record.
TEST(TopicPlanner, PartitionCountsAreBoundedBeforePlanning) {
  MetadataImage image = image_with_brokers(1);
  Rng rng(5);
  PartitionLimits limits{100, 50, 120};
  ControllerError huge = refusal_of(plan_create_topic(image, NewTopic{"t", INT32_MAX, 1}, {}, limits, rng));
  EXPECT_EQ(huge.code, ErrorCode::kPolicyViolation);
  EXPECT_NE(huge.message.find("max.partitions.per.topic"), std::string::npos) << huge.message;
  apply_all(image, plan_create_topic(image, NewTopic{"t", 50, 1}, {}, limits, rng));

  ControllerError grow = refusal_of(plan_create_partitions(image, "t", INT32_MAX, {}, limits, rng));
  EXPECT_EQ(grow.code, ErrorCode::kPolicyViolation);
  EXPECT_NE(grow.message.find("max.partitions.per.topic"), std::string::npos) << grow.message;
  EXPECT_EQ(refusal_of(plan_create_partitions(image, "t", 51, {}, limits, rng)).code, ErrorCode::kPolicyViolation);

  apply_all(image, plan_create_topic(image, NewTopic{"u", 50, 1}, {}, limits, rng));
  ControllerError cluster = refusal_of(plan_create_topic(image, NewTopic{"v", 21, 1}, {}, limits, rng));
  EXPECT_EQ(cluster.code, ErrorCode::kPolicyViolation);
  EXPECT_NE(cluster.message.find("(max.partitions), which has 100"), std::string::npos) << cluster.message;
  apply_all(image, plan_create_topic(image, NewTopic{"v", 20, 1}, {}, limits, rng));
  EXPECT_EQ(total_partitions(image), 120);
}

TEST(TopicPlanner, PartitionsPerRequestCountLikeKafka) {
  TopicDefaults defaults{3, 1};
  EXPECT_EQ(requested_partitions(-1, 0, defaults), 3);
  EXPECT_EQ(requested_partitions(0, 0, defaults), 0);
  EXPECT_EQ(requested_partitions(-5, 0, defaults), 0);
  EXPECT_EQ(requested_partitions(-1, 4, defaults), 4);
  EXPECT_EQ(requested_partitions(INT32_MAX, 0, defaults), INT32_MAX);
  PartitionLimits limits;
  EXPECT_FALSE(check_partitions_per_request(10000, limits));
  auto refused = check_partitions_per_request(int64_t(INT32_MAX) * 2, limits);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->code, ErrorCode::kPolicyViolation);
  EXPECT_EQ(refused->message.rfind("Excessively large number of partitions per request", 0), 0u) << refused->message;
}

}  // namespace
}  // namespace samsa

namespace samsa {
namespace {

std::string message_of(const Plan& plan) {
  EXPECT_TRUE(std::holds_alternative<ControllerError>(plan));
  return std::holds_alternative<ControllerError>(plan) ? std::get<ControllerError>(plan).message : "";
}

// Kafka's ReplicationControlManager words for CreateTopics and
// CreatePartitions refusals (issue 14 item 5).
TEST(TopicPlanner, KafkasPlacementAndAssignmentMessages) {
  MetadataImage image = image_with_brokers(2);
  Rng rng(5);
  EXPECT_EQ(message_of(plan_create_topic(image, NewTopic{"t", 3, 3}, {}, PartitionLimits{}, rng)),
            "Unable to replicate the partition 3 time(s): The target replication factor of 3 cannot be reached "
            "because only 2 broker(s) are registered.");
  EXPECT_EQ(message_of(plan_create_topic(image, NewTopic{"t", 3, -2}, {}, PartitionLimits{}, rng)),
            "Replication factor must be larger than 0, or -1 to use the default value.");
  EXPECT_EQ(message_of(plan_create_topic(image, NewTopic{"t", -5, 1}, {}, PartitionLimits{}, rng)),
            "Number of partitions was set to an invalid non-positive value.");
  // default.replication.factor beyond the brokers.
  EXPECT_EQ(message_of(plan_create_topic(image, NewTopic{"t", -1, -1}, TopicDefaults{1, 3}, PartitionLimits{}, rng)),
            "Unable to replicate the partition 3 time(s): The target replication factor of 3 cannot be reached "
            "because only 2 broker(s) are registered.");
  const std::vector<NodeId> one_two = {NodeId(1), NodeId(2)};
  EXPECT_EQ(message_of(plan_create_topic(image, NewTopic{"t", -1, 2, {one_two}}, {}, PartitionLimits{}, rng)),
            "A manual partition assignment was specified, but replication factor was not set to -1.");
  EXPECT_EQ(message_of(plan_create_topic(image, NewTopic{"t", 1, -1, {one_two}}, {}, PartitionLimits{}, rng)),
            "A manual partition assignment was specified, but numPartitions was not set to -1.");
  EXPECT_EQ(message_of(plan_create_topic(image, NewTopic{"t", -1, -1, {{}}}, {}, PartitionLimits{}, rng)),
            "The manual partition assignment includes an empty replica list.");
  EXPECT_EQ(message_of(plan_create_topic(image, NewTopic{"t", -1, -1, {{NodeId(9), NodeId(1), NodeId(7)}}}, {},
                                         PartitionLimits{}, rng)),
            "The manual partition assignment includes broker 7, but no such broker is registered.");
  EXPECT_EQ(message_of(plan_create_topic(image, NewTopic{"t", -1, -1, {{NodeId(2), NodeId(1), NodeId(2)}}}, {},
                                         PartitionLimits{}, rng)),
            "The manual partition assignment includes the broker 2 more than once.");
  EXPECT_EQ(message_of(plan_create_topic(image, NewTopic{"t", -1, -1, {one_two, {NodeId(1)}}}, {},
                                         PartitionLimits{}, rng)),
            "The manual partition assignment includes a partition with 1 replica(s), but this is not consistent "
            "with previous partitions, which have 2 replica(s).");

  apply_all(image, plan_create_topic(image, NewTopic{"t", 2, 2}, {}, PartitionLimits{}, rng));
  EXPECT_EQ(message_of(plan_create_partitions(image, "t", 4, {one_two}, PartitionLimits{}, rng)),
            "Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified.");
  EXPECT_EQ(message_of(plan_create_partitions(image, "t", 3, {{NodeId(1)}}, PartitionLimits{}, rng)),
            "The manual partition assignment includes a partition with 1 replica(s), but this is not consistent "
            "with previous partitions, which have 2 replica(s).");
  apply_all(image, plan_create_partitions(image, "t", 3, {{NodeId(2), NodeId(1)}}, PartitionLimits{}, rng));
  EXPECT_EQ(image.topic("t")->partitions[2].replicas, (std::vector<NodeId>{NodeId(2), NodeId(1)}));
  EXPECT_EQ(image.topic("t")->partitions[2].leader, NodeId(2));
}

// Placement through the planner: the image's racks are used, new
// partitions keep the topic's replication factor, and one broker still
// gets every partition (today's single-node behaviour).
TEST(TopicPlanner, PlacesOverTheImagesBrokersAndRacks) {
  MetadataImage image;
  for (int i = 1; i <= 6; ++i) {
    image.apply(unfenced_broker(i, std::string(i % 2 ? "odd" : "even")));
  }
  Rng rng(6);
  apply_all(image, plan_create_topic(image, NewTopic{"racks", 12, 2}, {}, PartitionLimits{}, rng));
  apply_all(image, plan_create_partitions(image, "racks", 18, {}, PartitionLimits{}, rng));
  ASSERT_EQ(image.topic("racks")->partitions.size(), 18u);
  for (const auto& p : image.topic("racks")->partitions) {
    ASSERT_EQ(p.replicas.size(), 2u);
    EXPECT_NE(p.replicas[0].value() % 2, p.replicas[1].value() % 2) << "both replicas on one rack";
  }
  MetadataImage single = image_with_brokers(1);
  apply_all(single, plan_create_topic(single, NewTopic{"one", 4, 1}, {}, PartitionLimits{}, rng));
  for (const auto& p : single.topic("one")->partitions) {
    EXPECT_EQ(p.replicas, std::vector<NodeId>{NodeId(1)});
    EXPECT_EQ(p.leader, NodeId(1));
  }
}

// Liveness in placement, as Kafka 3.9's controller: brokers in controlled
// shutdown are not usable; fenced ones count as registered and may hold a
// follower replica when the unfenced ones are exhausted, but never lead or
// start in the ISR.
MetadataImage image_with_liveness() {
  MetadataImage image = image_with_brokers(4);
  using Fencing = BrokerRegistrationChangeRecord::Fencing;
  image.apply(BrokerRegistrationChangeRecord{NodeId(3), BrokerEpoch(1), Fencing::kFence, false});
  image.apply(BrokerRegistrationChangeRecord{NodeId(4), BrokerEpoch(1), Fencing::kNone, true});
  return image;
}

TEST(TopicPlanner, PlacementLeavesOutBrokersInControlledShutdownAndNeverLeadsWithAFencedOne) {
  MetadataImage image = image_with_liveness();
  Rng rng(7);
  // Usable: 1, 2 (unfenced) and 3 (fenced); 4 is shutting down.
  const Plan too_many = plan_create_topic(image, NewTopic{"t", 3, 4}, {}, PartitionLimits{}, rng);
  EXPECT_EQ(error_of(too_many), ErrorCode::kInvalidReplicationFactor);
  EXPECT_EQ(message_of(too_many),
            "Unable to replicate the partition 4 time(s): The target replication factor of 4 cannot be reached "
            "because only 3 broker(s) are registered.");

  apply_all(image, plan_create_topic(image, NewTopic{"two", 12, 2}, {}, PartitionLimits{}, rng));
  apply_all(image, plan_create_topic(image, NewTopic{"three", 12, 3}, {}, PartitionLimits{}, rng));
  for (const char* name : {"two", "three"}) {
    for (const auto& p : image.topic(name)->partitions) {
      EXPECT_NE(p.leader, NodeId(3));
      EXPECT_TRUE(image.broker_active(p.leader));
      for (NodeId r : p.replicas) EXPECT_NE(r, NodeId(4));
      for (NodeId r : p.isr) EXPECT_TRUE(image.broker_active(r));
      EXPECT_EQ(p.leader, p.isr.front());
    }
  }
  // RF 3 needs the fenced broker as a follower outside the ISR.
  for (const auto& p : image.topic("three")->partitions) {
    EXPECT_EQ(p.replicas.size(), 3u);
    EXPECT_EQ(p.isr.size(), 2u);
  }
}

TEST(TopicPlanner, NoUnfencedBrokerRefusesPlacementAndManualAssignment) {
  MetadataImage image = image_with_liveness();
  using Fencing = BrokerRegistrationChangeRecord::Fencing;
  for (int id : {1, 2}) {
    image.apply(BrokerRegistrationChangeRecord{NodeId(id), BrokerEpoch(1), Fencing::kFence, false});
  }
  Rng rng(8);
  const Plan placed = plan_create_topic(image, NewTopic{"t", 1, 1}, {}, PartitionLimits{}, rng);
  EXPECT_EQ(error_of(placed), ErrorCode::kInvalidReplicationFactor);
  EXPECT_EQ(message_of(placed), "Unable to replicate the partition 1 time(s): All brokers are currently fenced.");
  const Plan manual = plan_create_topic(image, NewTopic{"t", -1, -1, {{NodeId(1), NodeId(4)}}}, {},
                                        PartitionLimits{}, rng);
  EXPECT_EQ(error_of(manual), ErrorCode::kInvalidReplicaAssignment);
  EXPECT_EQ(message_of(manual),
            "All brokers specified in the manual partition assignment for partition 0 are fenced or in controlled "
            "shutdown.");
}

TEST(TopicPlanner, ManualAssignmentKeepsOnlyActiveReplicasInTheIsr) {
  MetadataImage image = image_with_liveness();
  Rng rng(9);
  apply_all(image,
            plan_create_topic(image, NewTopic{"m", -1, -1, {{NodeId(3), NodeId(2), NodeId(4)}}}, {}, PartitionLimits{},
                              rng));
  const PartitionState& p = image.topic("m")->partitions.at(0);
  EXPECT_EQ(p.replicas, (std::vector<NodeId>{NodeId(3), NodeId(2), NodeId(4)}));
  EXPECT_EQ(p.isr, (std::vector<NodeId>{NodeId(2)}));
  EXPECT_EQ(p.leader, NodeId(2));
}

}  // namespace
}  // namespace samsa

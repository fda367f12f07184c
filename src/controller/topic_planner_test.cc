#include "controller/topic_planner.h"

#include <gtest/gtest.h>

namespace samsa {
namespace {

using protocol::ErrorCode;

MetadataImage image_with_brokers(int n) {
  MetadataImage image;
  for (int i = 1; i <= n; ++i) image.apply(RegisterBrokerRecord{NodeId(i), 1, "127.0.0.1", 9090 + i, std::nullopt});
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
  apply_all(image, plan_create_topic(image, t, TopicDefaults{}, rng));
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
  EXPECT_EQ(error_of(plan_create_topic(image, NewTopic{"bad name", 1, 1}, {}, rng)), ErrorCode::kInvalidTopicException);
  EXPECT_EQ(error_of(plan_create_topic(image, NewTopic{"t", 0, 1}, {}, rng)), ErrorCode::kInvalidPartitions);
  EXPECT_EQ(error_of(plan_create_topic(image, NewTopic{"t", 1, 3}, {}, rng)), ErrorCode::kInvalidReplicationFactor);
  apply_all(image, plan_create_topic(image, NewTopic{"t", -1, -1}, TopicDefaults{3, 1}, rng));
  EXPECT_EQ(image.topic("t")->partitions.size(), 3u);
  EXPECT_EQ(error_of(plan_create_topic(image, NewTopic{"t", 1, 1}, {}, rng)), ErrorCode::kTopicAlreadyExists);
  EXPECT_EQ(error_of(plan_create_partitions(image, "t", 2, {}, rng)), ErrorCode::kInvalidPartitions);
  EXPECT_EQ(error_of(plan_delete_topic(image, "nope")), ErrorCode::kUnknownTopicOrPartition);
}

TEST(TopicPlanner, GrowsAndDeletesTopics) {
  MetadataImage image = image_with_brokers(1);
  Rng rng(3);
  apply_all(image, plan_create_topic(image, NewTopic{"t", 2, 1}, {}, rng));
  apply_all(image, plan_create_partitions(image, "t", 5, {}, rng));
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
  EXPECT_EQ(error_of(plan_create_topic(image, dup, {}, rng)), ErrorCode::kInvalidReplicaAssignment);
  NewTopic unknown{"t", -1, -1, {{NodeId(7)}}};
  EXPECT_EQ(error_of(plan_create_topic(image, unknown, {}, rng)), ErrorCode::kInvalidReplicaAssignment);
  NewTopic ok{"t", -1, -1, {{NodeId(2), NodeId(1)}, {NodeId(1), NodeId(2)}}};
  apply_all(image, plan_create_topic(image, ok, {}, rng));
  EXPECT_EQ(image.topic("t")->partitions[0].leader, NodeId(2));
}

}  // namespace
}  // namespace samsa

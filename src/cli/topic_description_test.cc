#include "cli/topic_description.h"

#include <gtest/gtest.h>

namespace samsa::cli {
namespace {

TEST(TopicDescription, MatchesKafkaTopicsLayout) {
  TopicDescription t;
  t.name = "events";
  t.topic_id = "AAAAAAAAAAAAAAAAAAAAAQ";
  t.partitions = {{1, 2, {2, 3}, {2}}, {0, 1, {1, 2}, {1, 2}}};
  t.configs = {{"cleanup.policy", "compact"}, {"retention.ms", "1000"}};
  EXPECT_EQ(format_topic_description(t),
            "Topic: events\tTopicId: AAAAAAAAAAAAAAAAAAAAAQ\tPartitionCount: 2\t"
            "ReplicationFactor: 2\tConfigs: cleanup.policy=compact,retention.ms=1000\n"
            "\tTopic: events\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2\n"
            "\tTopic: events\tPartition: 1\tLeader: 2\tReplicas: 2,3\tIsr: 2\n");
}

TEST(TopicDescription, UnknownIdAndLeaderless) {
  TopicDescription t;
  t.name = "x";
  t.partitions = {{0, -1, {1}, {}}};
  EXPECT_EQ(format_topic_description(t),
            "Topic: x\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n"
            "\tTopic: x\tPartition: 0\tLeader: none\tReplicas: 1\tIsr: \n");
}

}  // namespace
}  // namespace samsa::cli

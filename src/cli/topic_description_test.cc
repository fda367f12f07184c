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

namespace samsa::cli {
namespace {

TEST(TopicDescription, OfflineReplicasEndTheLineOnlyWhenThereAreAny) {
  TopicDescription t;
  t.name = "x";
  t.partitions = {{0, 2, {1, 2, 3}, {2}, {1, 3}}};
  EXPECT_EQ(format_topic_description(t),
            "Topic: x\tPartitionCount: 1\tReplicationFactor: 3\tConfigs: \n"
            "\tTopic: x\tPartition: 0\tLeader: 2\tReplicas: 1,2,3\tIsr: 2\tOffline: 1,3\n");
}

// TopicCommand.PartitionDescription's predicates, one partition each.
TopicDescription report_topic() {
  TopicDescription t;
  t.name = "r";
  t.min_insync_replicas = 2;
  t.partitions = {
      {0, 1, {1, 2, 3}, {1, 2, 3}, {}},  // healthy
      {1, 1, {1, 2, 3}, {1, 2}, {3}},    // under-replicated, at min ISR
      {2, 2, {2, 3, 1}, {2}, {1, 3}},    // under-replicated, under min ISR
      {3, -1, {3}, {}, {3}},             // no leader: under min ISR, unavailable
      {4, 4, {4}, {4}, {}},              // leader not live: unavailable; under min ISR
  };
  return t;
}

std::vector<int32_t> reported(const ReplicationReports& reports) {
  std::string text = format_partition_reports(report_topic(), reports, {1, 2, 3});
  std::vector<int32_t> out;
  for (size_t at = text.find("Partition: "); at != std::string::npos; at = text.find("Partition: ", at + 1)) {
    out.push_back(std::stoi(text.substr(at + 11)));
  }
  return out;
}

TEST(PartitionReports, EachSelectsAsKafkaTopicsDoes) {
  EXPECT_EQ(reported({.under_replicated = true}), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(reported({.under_min_isr = true}), (std::vector<int32_t>{2, 3, 4}));
  EXPECT_EQ(reported({.at_min_isr = true}), (std::vector<int32_t>{1}));
  EXPECT_EQ(reported({.unavailable = true}), (std::vector<int32_t>{3, 4}));
  // Several reports: a partition matching any of them, printed once.
  EXPECT_EQ(reported({.under_min_isr = true, .unavailable = true}), (std::vector<int32_t>{2, 3, 4}));
}

TEST(PartitionReports, NoTopicLine) {
  std::string text = format_partition_reports(report_topic(), {.at_min_isr = true}, {1, 2, 3});
  EXPECT_EQ(text, "\tTopic: r\tPartition: 1\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2\tOffline: 3\n");
}

}  // namespace
}  // namespace samsa::cli

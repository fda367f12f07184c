#pragma once
// TopicDescription: what `samsa topic describe` shows about one topic, and
// its text form, the same lines kafka-topics.sh --describe prints so that
// operators' scripts and habits carry over:
//
//   Topic: t\tTopicId: ID\tPartitionCount: 2\tReplicationFactor: 1\tConfigs: k=v,k2=v2
//   \tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1
//
// TopicId is left out when unknown (as kafka-topics.sh does for a zero id);
// a partition without a leader shows "Leader: none". Pure: no I/O.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace samsa::cli {

struct PartitionDescription {
  int32_t partition = 0;
  int32_t leader = -1;
  std::vector<int32_t> replicas;
  std::vector<int32_t> isr;
};

struct TopicDescription {
  std::string name;
  std::optional<std::string> topic_id;
  std::vector<PartitionDescription> partitions;  // any order; printed by id
  std::vector<std::pair<std::string, std::string>> configs;  // non-default only
};

std::string format_topic_description(const TopicDescription& topic);

}  // namespace samsa::cli

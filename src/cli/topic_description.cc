#include "cli/topic_description.h"

#include <algorithm>

namespace samsa::cli {
namespace {

std::string join_ids(const std::vector<int32_t>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(ids[i]);
  }
  return out;
}

}  // namespace

std::string format_topic_description(const TopicDescription& topic) {
  std::vector<PartitionDescription> partitions = topic.partitions;
  std::sort(partitions.begin(), partitions.end(),
            [](const auto& a, const auto& b) { return a.partition < b.partition; });
  size_t replication_factor = partitions.empty() ? 0 : partitions.front().replicas.size();

  std::string out = "Topic: " + topic.name;
  if (topic.topic_id) out += "\tTopicId: " + *topic.topic_id;
  out += "\tPartitionCount: " + std::to_string(partitions.size());
  out += "\tReplicationFactor: " + std::to_string(replication_factor);
  out += "\tConfigs: ";
  for (size_t i = 0; i < topic.configs.size(); ++i) {
    if (i > 0) out += ',';
    out += topic.configs[i].first + "=" + topic.configs[i].second;
  }
  out += '\n';
  for (const PartitionDescription& p : partitions) {
    out += "\tTopic: " + topic.name;
    out += "\tPartition: " + std::to_string(p.partition);
    out += "\tLeader: " + (p.leader < 0 ? std::string("none") : std::to_string(p.leader));
    out += "\tReplicas: " + join_ids(p.replicas);
    out += "\tIsr: " + join_ids(p.isr);
    out += '\n';
  }
  return out;
}

}  // namespace samsa::cli

#include "cli/topic_description.h"

#include <algorithm>

#include "base/assert.h"

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

std::vector<PartitionDescription> sorted_partitions(const TopicDescription& topic) {
  std::vector<PartitionDescription> partitions = topic.partitions;
  std::sort(partitions.begin(), partitions.end(),
            [](const auto& a, const auto& b) { return a.partition < b.partition; });
  return partitions;
}

std::string topic_line(const TopicDescription& topic, const std::vector<PartitionDescription>& partitions) {
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
  return out + '\n';
}

std::string partition_line(const std::string& topic, const PartitionDescription& p) {
  std::string out = "\tTopic: " + topic;
  out += "\tPartition: " + std::to_string(p.partition);
  out += "\tLeader: " + (has_leader(p) ? std::to_string(p.leader) : std::string("none"));
  out += "\tReplicas: " + join_ids(p.replicas);
  out += "\tIsr: " + join_ids(p.isr);
  if (!p.offline.empty()) out += "\tOffline: " + join_ids(p.offline);
  return out + '\n';
}

}  // namespace

bool has_leader(const PartitionDescription& p) { return p.leader >= 0; }

bool is_under_replicated(const PartitionDescription& p) { return p.isr.size() < p.replicas.size(); }

bool is_under_min_isr(const PartitionDescription& p, int32_t min_insync_replicas) {
  return !has_leader(p) || int64_t(p.isr.size()) < min_insync_replicas;
}

bool is_at_min_isr(const PartitionDescription& p, int32_t min_insync_replicas) {
  return int64_t(p.isr.size()) == min_insync_replicas;
}

bool is_unavailable(const PartitionDescription& p, const std::set<int32_t>& live_brokers) {
  return !has_leader(p) || live_brokers.count(p.leader) == 0;
}

std::string format_topic_description(const TopicDescription& topic) {
  std::vector<PartitionDescription> partitions = sorted_partitions(topic);
  std::string out = topic_line(topic, partitions);
  for (const PartitionDescription& p : partitions) out += partition_line(topic.name, p);
  return out;
}

std::string format_partition_reports(const TopicDescription& topic, const ReplicationReports& reports,
                                     const std::set<int32_t>& live_brokers) {
  ASSERT(reports.any());
  ASSERT(!reports.needs_min_isr() || topic.min_insync_replicas.has_value());
  std::string out;
  for (const PartitionDescription& p : sorted_partitions(topic)) {
    bool match = (reports.under_replicated && is_under_replicated(p)) ||
                 (reports.under_min_isr && is_under_min_isr(p, *topic.min_insync_replicas)) ||
                 (reports.at_min_isr && is_at_min_isr(p, *topic.min_insync_replicas)) ||
                 (reports.unavailable && is_unavailable(p, live_brokers));
    if (match) out += partition_line(topic.name, p);
  }
  return out;
}

}  // namespace samsa::cli

#include "controller/topic_planner.h"

#include <algorithm>
#include <set>

#include "controller/topic_rules.h"

namespace samsa {
namespace {

using protocol::ErrorCode;

ControllerError error(ErrorCode code, std::string message) { return ControllerError{code, std::move(message)}; }

std::vector<NodeId> live_brokers(const MetadataImage& image) {
  std::vector<NodeId> ids;
  for (const auto& [id, broker] : image.brokers()) ids.push_back(id);
  return ids;  // std::map keeps them sorted
}

// Kafka's rack-unaware placement: replicas of partition p start at broker
// (start + p) and take the next brokers in id order, so leaders spread evenly.
std::vector<NodeId> place_replicas(const std::vector<NodeId>& brokers, int32_t start, int32_t partition, int16_t rf) {
  std::vector<NodeId> replicas;
  for (int16_t j = 0; j < rf; ++j) {
    replicas.push_back(brokers[size_t(start + partition + j) % brokers.size()]);
  }
  return replicas;
}

std::optional<ControllerError> check_assignment(const MetadataImage& image, const std::vector<NodeId>& replicas,
                                                size_t expected_size) {
  if (replicas.empty()) return error(ErrorCode::kInvalidReplicaAssignment, "Replica assignment is empty");
  if (expected_size != 0 && replicas.size() != expected_size) {
    return error(ErrorCode::kInvalidReplicaAssignment, "All partitions must have the same number of replicas");
  }
  std::set<NodeId> unique(replicas.begin(), replicas.end());
  if (unique.size() != replicas.size()) {
    return error(ErrorCode::kInvalidReplicaAssignment, "Duplicate brokers in replica assignment");
  }
  for (NodeId id : replicas) {
    if (!image.broker(id)) {
      return error(ErrorCode::kInvalidReplicaAssignment,
                   "Broker " + std::to_string(id.value()) + " in the replica assignment is not registered");
    }
  }
  return std::nullopt;
}

PartitionRecord new_partition(const Uuid& topic_id, int32_t partition, std::vector<NodeId> replicas) {
  PartitionRecord p;
  p.topic_id = topic_id;
  p.partition = PartitionId(partition);
  p.replicas = std::move(replicas);
  p.isr = p.replicas;  // every replica starts in sync: all logs are empty
  p.leader = p.replicas.front();
  p.leader_epoch = LeaderEpoch(0);
  p.partition_epoch = 0;
  return p;
}

// Adds partitions [first, total) to `records`, placed or as assigned.
std::optional<ControllerError> add_partitions(const MetadataImage& image, const Uuid& topic_id, int32_t first,
                                              int32_t total, int16_t rf,
                                              const std::vector<std::vector<NodeId>>& assignments, Rng& rng,
                                              std::vector<MetadataRecord>& records) {
  std::vector<NodeId> brokers = live_brokers(image);
  if (assignments.empty()) {
    if (rf <= 0) return error(ErrorCode::kInvalidReplicationFactor, "Replication factor must be larger than 0.");
    if (size_t(rf) > brokers.size()) {
      return error(ErrorCode::kInvalidReplicationFactor,
                   "Unable to replicate the partition " + std::to_string(rf) + " time(s): The target replication factor of " +
                       std::to_string(rf) + " cannot be reached because only " + std::to_string(brokers.size()) +
                       " broker(s) are registered.");
    }
    int32_t start = int32_t(rng.uniform(brokers.size()));
    for (int32_t p = first; p < total; ++p) {
      records.push_back(new_partition(topic_id, p, place_replicas(brokers, start, p, rf)));
    }
    return std::nullopt;
  }
  if (int32_t(assignments.size()) != total - first) {
    return error(ErrorCode::kInvalidReplicaAssignment, "Assignments must cover exactly the new partitions");
  }
  size_t expected = rf > 0 ? size_t(rf) : assignments.front().size();
  for (int32_t p = first; p < total; ++p) {
    const auto& replicas = assignments[size_t(p - first)];
    if (auto e = check_assignment(image, replicas, expected)) return e;
    records.push_back(new_partition(topic_id, p, replicas));
  }
  return std::nullopt;
}

// Checked before add_partitions plans a record per partition.
std::optional<ControllerError> check_partition_count(const MetadataImage& image, int64_t new_total, int64_t added,
                                                     const PartitionLimits& limits) {
  if (new_total > limits.per_topic) {
    return error(ErrorCode::kPolicyViolation, "Number of partitions " + std::to_string(new_total) +
                                                  " exceeds the limit of " + std::to_string(limits.per_topic) +
                                                  " partitions per topic (max.partitions.per.topic).");
  }
  if (auto e = check_partitions_per_request(added, limits)) return e;
  int64_t existing = total_partitions(image);
  if (existing + added > limits.per_cluster) {
    return error(ErrorCode::kPolicyViolation,
                 "Adding " + std::to_string(added) + " partitions would exceed the limit of " +
                     std::to_string(limits.per_cluster) + " partitions in the cluster (max.partitions), which has " +
                     std::to_string(existing) + ".");
  }
  return std::nullopt;
}

}  // namespace

int64_t requested_partitions(int32_t num_partitions, size_t assignments, const TopicDefaults& defaults) {
  if (assignments > 0) return int64_t(assignments);
  if (num_partitions == -1) return defaults.num_partitions;
  return num_partitions > 0 ? num_partitions : 0;
}

std::optional<ControllerError> check_partitions_per_request(int64_t requested, const PartitionLimits& limits) {
  if (requested <= limits.per_request) return std::nullopt;
  // Kafka's words (ReplicationControlManager), then the figures.
  return error(ErrorCode::kPolicyViolation, "Excessively large number of partitions per request: " +
                                                std::to_string(requested) + " requested, the limit is " +
                                                std::to_string(limits.per_request) +
                                                " (max.partitions.per.request).");
}

int64_t total_partitions(const MetadataImage& image) {
  int64_t total = 0;
  for (const auto& [name, topic] : image.topics()) total += int64_t(topic.partitions.size());
  return total;
}

Plan plan_create_topic(const MetadataImage& image, const NewTopic& topic, const TopicDefaults& defaults,
                       const PartitionLimits& limits, Rng& rng) {
  if (auto reason = invalid_topic_name_reason(topic.name)) return error(ErrorCode::kInvalidTopicException, *reason);
  if (image.topic(topic.name)) {
    return error(ErrorCode::kTopicAlreadyExists, "Topic '" + topic.name + "' already exists.");
  }
  bool manual = !topic.assignments.empty();
  if (manual && (topic.num_partitions != -1 || topic.replication_factor != -1)) {
    return error(ErrorCode::kInvalidRequest,
                 "Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the "
                 "same time.");
  }
  int32_t partitions = manual ? int32_t(topic.assignments.size())
                              : (topic.num_partitions == -1 ? defaults.num_partitions : topic.num_partitions);
  int16_t rf = topic.replication_factor == -1 ? defaults.replication_factor : topic.replication_factor;
  if (partitions <= 0) return error(ErrorCode::kInvalidPartitions, "Number of partitions must be larger than 0.");
  if (auto e = check_partition_count(image, partitions, partitions, limits)) return *e;

  Uuid id;
  do {
    id = Uuid::random(rng);
  } while (image.topic_by_id(id));

  std::vector<MetadataRecord> records;
  records.push_back(TopicRecord{topic.name, id});
  if (auto e = add_partitions(image, id, 0, partitions, manual ? int16_t(-1) : rf, topic.assignments, rng, records)) {
    return *e;
  }
  for (const auto& [key, value] : topic.configs) {
    records.push_back(ConfigRecord{ConfigRecord::Resource::kTopic, topic.name, key, value});
  }
  return records;
}

Plan plan_delete_topic(const MetadataImage& image, const std::string& name) {
  const TopicState* t = image.topic(name);
  if (!t) return error(ErrorCode::kUnknownTopicOrPartition, "This server does not host this topic-partition.");
  return std::vector<MetadataRecord>{RemoveTopicRecord{t->id}};
}

Plan plan_create_partitions(const MetadataImage& image, const std::string& name, int32_t new_total,
                            const std::vector<std::vector<NodeId>>& assignments, const PartitionLimits& limits,
                            Rng& rng) {
  const TopicState* t = image.topic(name);
  if (!t) return error(ErrorCode::kUnknownTopicOrPartition, "This server does not host this topic-partition.");
  int32_t current = int32_t(t->partitions.size());
  if (new_total < current) {
    return error(ErrorCode::kInvalidPartitions, "Topic currently has " + std::to_string(current) +
                                                    " partitions, which is higher than the requested " +
                                                    std::to_string(new_total) + ".");
  }
  if (new_total == current) {
    return error(ErrorCode::kInvalidPartitions, "Topic already has " + std::to_string(current) + " partitions.");
  }
  if (auto e = check_partition_count(image, new_total, int64_t(new_total) - current, limits)) return *e;
  int16_t rf = int16_t(t->partitions.front().replicas.size());
  std::vector<MetadataRecord> records;
  if (auto e = add_partitions(image, t->id, current, new_total, rf, assignments, rng, records)) return *e;
  return records;
}

Plan plan_alter_topic_configs(const MetadataImage& image, const std::string& name,
                              const std::map<std::string, std::optional<std::string>>& changes) {
  if (!image.topic(name)) return error(ErrorCode::kUnknownTopicOrPartition, "Topic " + name + " does not exist");
  std::vector<MetadataRecord> records;
  for (const auto& [key, value] : changes) {
    records.push_back(ConfigRecord{ConfigRecord::Resource::kTopic, name, key, value});
  }
  return records;
}

}  // namespace samsa

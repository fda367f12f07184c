#include "controller/topic_planner.h"

#include <algorithm>
#include <set>

#include "base/assert.h"
#include "controller/replica_placer.h"
#include "controller/topic_rules.h"

namespace samsa {
namespace {

using protocol::ErrorCode;

ControllerError error(ErrorCode code, std::string message) { return ControllerError{code, std::move(message)}; }

// Kafka's usableBrokers: every registered broker not in controlled
// shutdown, with its rack and whether it is fenced (a fenced broker may
// hold a replica, never lead a new partition: the placer's rule).
std::vector<UsableBroker> usable_brokers(const MetadataImage& image) {
  std::vector<UsableBroker> brokers;
  for (const auto& [id, broker] : image.brokers()) {
    if (!broker.in_controlled_shutdown) brokers.push_back(UsableBroker{id, broker.rack, broker.fenced});
  }
  return brokers;
}

// Kafka's new-partition ISR: the replicas that are active (unfenced, not
// in controlled shutdown), in assignment order.
std::vector<NodeId> active_replicas(const MetadataImage& image, const std::vector<NodeId>& replicas) {
  std::vector<NodeId> isr;
  for (NodeId id : replicas) {
    if (image.broker_active(id)) isr.push_back(id);
  }
  return isr;
}

// Kafka's validateManualPartitionAssignment, its checks in its order (on the
// sorted ids) and words.
std::optional<ControllerError> check_manual_assignment(const MetadataImage& image, const std::vector<NodeId>& replicas,
                                                       std::optional<size_t> replication_factor) {
  auto invalid = [](std::string message) { return error(ErrorCode::kInvalidReplicaAssignment, std::move(message)); };
  if (replicas.empty()) return invalid("The manual partition assignment includes an empty replica list.");
  std::vector<NodeId> sorted = replicas;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    const std::string id = std::to_string(sorted[i].value());
    if (!image.broker(sorted[i])) {
      return invalid("The manual partition assignment includes broker " + id + ", but no such broker is registered.");
    }
    if (i > 0 && sorted[i] == sorted[i - 1]) {
      return invalid("The manual partition assignment includes the broker " + id + " more than once.");
    }
  }
  if (replication_factor && sorted.size() != *replication_factor) {
    return invalid("The manual partition assignment includes a partition with " + std::to_string(sorted.size()) +
                   " replica(s), but this is not consistent with previous partitions, which have " +
                   std::to_string(*replication_factor) + " replica(s).");
  }
  return std::nullopt;
}

PartitionRecord new_partition(const Uuid& topic_id, int32_t partition, std::vector<NodeId> replicas,
                              std::vector<NodeId> isr) {
  ASSERT(!isr.empty());
  PartitionRecord p;
  p.topic_id = topic_id;
  p.partition = PartitionId(partition);
  p.replicas = std::move(replicas);
  // The active replicas start in sync (all logs are empty) and the first
  // of them leads (Kafka's buildPartitionRegistration): never a fenced
  // broker or one in controlled shutdown.
  p.isr = std::move(isr);
  p.leader = p.isr.front();
  p.leader_epoch = LeaderEpoch(0);
  p.partition_epoch = 0;
  return p;
}

// Partitions [first, total) placed by the StripedReplicaPlacer, or its
// refusal as Kafka words it: CreateTopics adds "Unable to replicate the
// partition N time(s): ", CreatePartitions passes the placer's message on.
std::optional<ControllerError> place_partitions(const MetadataImage& image, const Uuid& topic_id, int32_t first,
                                                int32_t total, int16_t rf, bool creating_topic, Rng& rng,
                                                std::vector<MetadataRecord>& records) {
  auto placed = place_replicas(usable_brokers(image), total - first, rf, rng);
  if (auto* refused = std::get_if<std::string>(&placed)) {
    std::string prefix = creating_topic ? "Unable to replicate the partition " + std::to_string(rf) + " time(s): " : "";
    return error(ErrorCode::kInvalidReplicationFactor, prefix + *refused);
  }
  auto& assignment = std::get<ReplicaAssignment>(placed);
  for (int32_t p = first; p < total; ++p) {
    std::vector<NodeId>& replicas = assignment[size_t(p - first)];
    std::vector<NodeId> isr = active_replicas(image, replicas);
    // The placer leads with an unfenced broker; one in controlled shutdown
    // is not usable: an empty ISR cannot happen, but Kafka checks it, in
    // these words.
    if (isr.empty()) {
      return error(ErrorCode::kInvalidReplicationFactor,
                   "Unable to replicate the partition " + std::to_string(rf) +
                       " time(s): All brokers are currently fenced or in controlled shutdown.");
    }
    records.push_back(new_partition(topic_id, p, std::move(replicas), std::move(isr)));
  }
  return std::nullopt;
}

// Partitions [first, first + assignments.size()) as assigned; rf: the
// topic's (CreatePartitions) or, when absent, the first assignment's.
std::optional<ControllerError> assign_partitions(const MetadataImage& image, const Uuid& topic_id, int32_t first,
                                                 const std::vector<std::vector<NodeId>>& assignments,
                                                 std::optional<size_t> rf, std::vector<MetadataRecord>& records) {
  for (size_t i = 0; i < assignments.size(); ++i) {
    if (auto e = check_manual_assignment(image, assignments[i], rf)) return e;
    rf = assignments[i].size();
    std::vector<NodeId> isr = active_replicas(image, assignments[i]);
    if (isr.empty()) {
      return error(ErrorCode::kInvalidReplicaAssignment,
                   "All brokers specified in the manual partition assignment for partition " +
                       std::to_string(first + int32_t(i)) + " are fenced or in controlled shutdown.");
    }
    records.push_back(new_partition(topic_id, first + int32_t(i), assignments[i], std::move(isr)));
  }
  return std::nullopt;
}

// Checked before a record per partition is planned.
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
  // Kafka's ReplicationControlManager.createTopic, its checks in its order.
  bool manual = !topic.assignments.empty();
  if (manual && topic.replication_factor != -1) {
    return error(ErrorCode::kInvalidRequest,
                 "A manual partition assignment was specified, but replication factor was not set to -1.");
  }
  if (manual && topic.num_partitions != -1) {
    return error(ErrorCode::kInvalidRequest,
                 "A manual partition assignment was specified, but numPartitions was not set to -1.");
  }
  if (!manual && (topic.replication_factor < -1 || topic.replication_factor == 0)) {
    return error(ErrorCode::kInvalidReplicationFactor,
                 "Replication factor must be larger than 0, or -1 to use the default value.");
  }
  if (!manual && (topic.num_partitions < -1 || topic.num_partitions == 0)) {
    return error(ErrorCode::kInvalidPartitions, "Number of partitions was set to an invalid non-positive value.");
  }
  int32_t partitions = manual ? int32_t(topic.assignments.size())
                              : (topic.num_partitions == -1 ? defaults.num_partitions : topic.num_partitions);
  int16_t rf = topic.replication_factor == -1 ? defaults.replication_factor : topic.replication_factor;
  if (auto e = check_partition_count(image, partitions, partitions, limits)) return *e;

  Uuid id;
  do {
    id = Uuid::random(rng);
  } while (image.topic_by_id(id));

  std::vector<MetadataRecord> records;
  records.push_back(TopicRecord{topic.name, id});
  auto failed = manual ? assign_partitions(image, id, 0, topic.assignments, std::nullopt, records)
                       : place_partitions(image, id, 0, partitions, rf, true, rng, records);
  if (failed) return *failed;
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
  const int32_t additional = new_total - current;
  if (!assignments.empty() && int32_t(assignments.size()) != additional) {
    return error(ErrorCode::kInvalidReplicaAssignment,
                 "Attempted to add " + std::to_string(additional) + " additional partition(s), but only " +
                     std::to_string(assignments.size()) + " assignment(s) were specified.");
  }
  // The new partitions have the replication factor of the existing ones
  // and are placed afresh by the placer, as Kafka's KRaft controller does.
  const size_t rf = t->partitions.front().replicas.size();
  std::vector<MetadataRecord> records;
  auto failed = assignments.empty()
                    ? place_partitions(image, t->id, current, new_total, int16_t(rf), false, rng, records)
                    : assign_partitions(image, t->id, current, assignments, rf, records);
  if (failed) return *failed;
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

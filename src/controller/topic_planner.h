#pragma once
// Pure decisions of the controller about topics: given the current image and
// a request, either the metadata records that carry it out or the Kafka
// error that refuses it. No I/O; randomness (topic ids, placement start) is
// injected, so a quorum can replay and a test can predict.

#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "base/rng.h"
#include "controller/metadata_image.h"
#include "protocol/error_code.h"

namespace samsa {

struct ControllerError {
  protocol::ErrorCode code;
  std::string message;
};

using Plan = std::variant<std::vector<MetadataRecord>, ControllerError>;

struct NewTopic {
  std::string name;
  int32_t num_partitions = -1;      // -1: the broker default (num.partitions)
  int16_t replication_factor = -1;  // -1: default.replication.factor
  // Manual assignment: partition i -> replica node ids. Empty: place them.
  std::vector<std::vector<NodeId>> assignments;
  std::map<std::string, std::string> configs;  // already validated
};

struct TopicDefaults {
  int32_t num_partitions = 1;
  int16_t replication_factor = 1;
};

// Bounds on partition counts, checked before any record is planned: each
// partition costs a record, memory and open files, so one request must not
// be able to ask for 2^31 of them. Exceeding one is POLICY_VIOLATION, as
// Kafka answers its fixed 10,000-partitions-per-request bound.
struct PartitionLimits {
  int64_t per_request = 10000;  // max.partitions.per.request
  int64_t per_topic = 10000;    // max.partitions.per.topic
  int64_t per_cluster = 100000; // max.partitions
};

// The partitions a CreateTopics topic asks for, counted as Kafka's
// validateTotalNumberOfPartitions does (-1: the default; <= 0: none, the
// topic fails on its own; an assignment: its size).
int64_t requested_partitions(int32_t num_partitions, size_t assignments, const TopicDefaults& defaults);
// POLICY_VIOLATION if one request adds more than limits.per_request.
std::optional<ControllerError> check_partitions_per_request(int64_t requested, const PartitionLimits& limits);
// Partitions of every topic in the image.
int64_t total_partitions(const MetadataImage& image);

Plan plan_create_topic(const MetadataImage& image, const NewTopic& topic, const TopicDefaults& defaults,
                       const PartitionLimits& limits, Rng& rng);
Plan plan_delete_topic(const MetadataImage& image, const std::string& name);
// Grows a topic to new_total partitions (CreatePartitions).
Plan plan_create_partitions(const MetadataImage& image, const std::string& name, int32_t new_total,
                            const std::vector<std::vector<NodeId>>& assignments, const PartitionLimits& limits,
                            Rng& rng);
// Sets (value) or deletes (nullopt) topic config keys; keys already validated.
Plan plan_alter_topic_configs(const MetadataImage& image, const std::string& name,
                              const std::map<std::string, std::optional<std::string>>& changes);

}  // namespace samsa

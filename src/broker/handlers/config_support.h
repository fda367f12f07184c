#pragma once
// What the config APIs share (CreateTopics v5+, DescribeConfigs,
// AlterConfigs, IncrementalAlterConfigs): Kafka's numbering of config
// resources and config types, and the single path by which a topic's
// override set changes — validated against the topic config definitions,
// diffed against the current overrides, and committed through the metadata
// log (ReplicaManager::apply_image then hands the partitions their new
// LogConfig). Loop-thread only, like the Broker.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/config_def.h"
#include "controller/topic_planner.h"

namespace samsa {

class Broker;

// Kafka's ConfigResource.Type ids.
enum class ConfigResourceType : int8_t {
  kUnknown = 0,
  kTopic = 2,
  kBroker = 4,
  kBrokerLogger = 8,
};

const char* config_resource_type_name(int8_t type);

// DescribeConfigsResponse.ConfigType (v3+): UNKNOWN 0, BOOLEAN 1, STRING 2,
// INT 3, SHORT 4, LONG 5, DOUBLE 6, LIST 7, CLASS 8, PASSWORD 9.
int8_t kafka_config_type(ConfigType type);

// The error for an alter request on a resource other than a topic or a
// broker: Samsa has no broker logger configs, and says so rather than
// pretending to apply them.
ControllerError unsupported_alter_resource(int8_t resource_type);

// Dynamic broker configs (KIP-226), as Kafka 3.9's ConfigAdminManager
// (broker side) and ConfigurationControlManager (controller side):
//
// A BROKER resource's name is "" (the cluster-wide default) or this node's
// id; anything else is INVALID_REQUEST "Node id must be an integer, but it
// is: x" / "Unexpected broker id, expected 1, but received 2".
std::optional<ControllerError> check_broker_resource_name(const Broker& broker, const std::string& name);
// INVALID_REQUEST "Error due to duplicate config keys" when a key repeats.
std::optional<ControllerError> duplicate_keys_error(const std::vector<std::string>& names);
// INVALID_REQUEST "Null value not supported for : a, b" when names is not empty.
std::optional<ControllerError> null_values_error(const std::vector<std::string>& names);
// DynamicBrokerConfig::validate of a resource's whole new set, as
// INVALID_REQUEST with Kafka's message (KAFKA-13609 keeps it INVALID_REQUEST).
std::optional<ControllerError> validate_broker_configs(const Broker& broker, const std::string& name,
                                                       const std::map<std::string, std::string>& props);
// Commits one ConfigRecord (type BROKER) per change: a value sets the key,
// nullopt deletes it. Kafka writes a record even for an unchanged value
// (KAFKA-14136), so brokers re-apply it. Nothing with validate_only.
std::optional<ControllerError> commit_broker_configs(
    Broker& broker, const std::string& name, const std::map<std::string, std::optional<std::string>>& changes,
    bool validate_only);

// (type, name) pairs that occur more than once in one request.
std::set<std::pair<int8_t, std::string>> duplicate_resources(
    const std::vector<std::pair<int8_t, std::string>>& resources);

// Replaces topic `name`'s override set by `overrides`: INVALID_CONFIG (with
// the key named) for an unknown key or a bad value, UNKNOWN_TOPIC_OR_PARTITION
// for a missing topic. With validate_only nothing is committed. nullopt on
// success; committing an unchanged set writes nothing.
std::optional<ControllerError> replace_topic_overrides(Broker& broker, const std::string& name,
                                                       const std::map<std::string, std::string>& overrides,
                                                       bool validate_only);

// The per-resource loop of AlterConfigs and IncrementalAlterConfigs: each
// resource is answered once; one named twice is refused with INVALID_REQUEST;
// the others get alter(resource)'s outcome. Response entries are built by
// the caller's generated type (resource_type, resource_name, error fields).
template <typename Resource, typename ResourceResponse, typename Alter>
std::vector<ResourceResponse> alter_each_resource(const std::vector<Resource>& resources, Alter alter) {
  std::vector<std::pair<int8_t, std::string>> keys;
  for (const auto& r : resources) keys.emplace_back(r.resource_type, r.resource_name);
  const auto duplicates = duplicate_resources(keys);
  std::vector<ResourceResponse> out;
  std::set<std::pair<int8_t, std::string>> answered;
  for (const auto& resource : resources) {
    auto key = std::make_pair(resource.resource_type, resource.resource_name);
    if (!answered.insert(key).second) continue;
    std::optional<ControllerError> error =
        duplicates.contains(key)
            ? std::optional(ControllerError{protocol::ErrorCode::kInvalidRequest, "Duplicate resource in request."})
            : alter(resource);
    ResourceResponse r;
    r.resource_type = resource.resource_type;
    r.resource_name = resource.resource_name;
    r.error_code = int16_t(error ? error->code : protocol::ErrorCode::kNone);
    r.error_message = error ? std::optional(error->message) : std::nullopt;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace samsa

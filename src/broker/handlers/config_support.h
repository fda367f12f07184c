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
#include "broker/async_response.h"
#include "controller/quorum_controller.h"
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
// What altering one config resource comes to: refused or done now
// (`error` or neither), or a change for the controller to commit (`commit`).
// Converts from the error types, so checks can `return e;`.
struct ConfigOutcome {
  struct Commit {
    std::string what;  // for logs: "2 config(s) of topic t"
    PlanFn plan;
  };
  ConfigOutcome() = default;
  ConfigOutcome(std::optional<ControllerError> e) : error(std::move(e)) {}  // NOLINT: implicit by design
  ConfigOutcome(ControllerError e) : error(std::move(e)) {}                 // NOLINT
  ConfigOutcome(Commit c) : commit(std::move(c)) {}                         // NOLINT
  std::optional<ControllerError> error;
  std::optional<Commit> commit;
};

// One ConfigRecord (type BROKER) per change: a value sets the key,
// nullopt deletes it. Kafka writes a record even for an unchanged value
// (KAFKA-14136), so brokers re-apply it. Nothing with validate_only.
ConfigOutcome commit_broker_configs(
    Broker& broker, const std::string& name, const std::map<std::string, std::optional<std::string>>& changes,
    bool validate_only);

// (type, name) pairs that occur more than once in one request.
std::set<std::pair<int8_t, std::string>> duplicate_resources(
    const std::vector<std::pair<int8_t, std::string>>& resources);

// Replaces topic `name`'s override set (in the controller's view) by
// `overrides`: INVALID_CONFIG (with the key named) for an unknown key or a
// bad value, UNKNOWN_TOPIC_OR_PARTITION for a missing topic. With
// validate_only nothing is committed; an unchanged set writes nothing.
ConfigOutcome replace_topic_overrides(Broker& broker, const std::string& name,
                                                       const std::map<std::string, std::string>& overrides,
                                                       bool validate_only);

// Submits a commit to the controller; `done` gets its outcome.
void submit_config_commit(Broker& broker, ConfigOutcome::Commit commit, ControllerDone done);

// The per-resource loop of AlterConfigs and IncrementalAlterConfigs: each
// resource is answered once; one named twice is refused with INVALID_REQUEST;
// the others get alter(resource)'s outcome, a commit once it is committed.
// The response (the caller's generated type, with its `responses` of
// resource_type, resource_name, error fields) is sent when every resource
// is answered.
template <typename Response, typename Resource, typename Alter>
void alter_each_resource(Broker& broker, Request& request, const std::vector<Resource>& resources, Alter alter) {
  using ResourceResponse = typename decltype(Response::responses)::value_type;
  std::vector<std::pair<int8_t, std::string>> keys;
  for (const auto& r : resources) keys.emplace_back(r.resource_type, r.resource_name);
  const auto duplicates = duplicate_resources(keys);
  auto reply = AsyncResponse<Response>::start(request);
  std::set<std::pair<int8_t, std::string>> answered;
  for (const auto& resource : resources) {
    auto key = std::make_pair(resource.resource_type, resource.resource_name);
    if (!answered.insert(key).second) continue;
    ResourceResponse r;
    r.resource_type = resource.resource_type;
    r.resource_name = resource.resource_name;
    reply->response().responses.push_back(std::move(r));
    size_t slot = reply->response().responses.size() - 1;
    auto answer = [reply, slot](const std::optional<ControllerError>& error) {
      ResourceResponse& out = reply->response().responses[slot];
      out.error_code = int16_t(error ? error->code : protocol::ErrorCode::kNone);
      out.error_message = error ? std::optional(error->message) : std::nullopt;
    };
    ConfigOutcome outcome =
        duplicates.contains(key)
            ? ConfigOutcome(ControllerError{protocol::ErrorCode::kInvalidRequest, "Duplicate resource in request."})
            : alter(resource);
    if (!outcome.commit) {
      answer(outcome.error);
      continue;
    }
    reply->add_part();
    submit_config_commit(broker, std::move(*outcome.commit), [reply, answer](std::optional<ControllerError> e) {
      answer(e);
      reply->finish();
    });
  }
  reply->finish();
}

}  // namespace samsa

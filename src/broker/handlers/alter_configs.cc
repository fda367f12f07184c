// AlterConfigs (v0-2), the legacy, non-incremental form: a TOPIC resource's
// configs become exactly the ones given — keys left out lose their override
// and fall back to the broker default (Kafka's semantics; entries with a
// null value are ignored, as Kafka does). Validated as a whole (unknown key
// or bad value: INVALID_CONFIG naming it), then committed through the
// metadata log unless validate_only.
//
// A BROKER resource ("" or this node's id) likewise gets exactly the given
// dynamic configs, as Kafka 3.9 (ConfigAdminManager.preprocess, then
// ConfigurationControlManager.legacyAlterConfigResource): duplicate keys
// and null values are INVALID_REQUEST, the new set is validated as a whole
// (DynamicBrokerConfig::validate), then every given key is written and
// every stored key left out deleted.
#include "broker/broker.h"
#include "broker/handlers/config_support.h"
#include "broker/handlers/handlers.h"
#include "broker/request.h"
#include "protocol/error_code.h"
#include "protocol/generated/alter_configs.h"

namespace samsa {
namespace {

using protocol::AlterConfigsRequest;
using protocol::AlterConfigsResponse;
using protocol::ErrorCode;
using ResourceResponse = AlterConfigsResponse::AlterConfigsResourceResponse;

ConfigOutcome alter_broker(Broker& broker, const AlterConfigsRequest::AlterConfigsResource& resource,
                                            bool validate_only) {
  std::vector<std::string> names;
  std::vector<std::string> nulls;
  std::map<std::string, std::string> props;
  for (const auto& config : resource.configs) {
    names.push_back(config.name);
    if (!config.value) nulls.push_back(config.name);
    if (config.value) props[config.name] = *config.value;
  }
  if (auto e = duplicate_keys_error(names)) return e;
  if (auto e = null_values_error(nulls)) return e;
  const std::string& name = resource.resource_name;
  if (auto e = check_broker_resource_name(broker, name)) return e;
  if (auto e = validate_broker_configs(broker, name, props)) return e;
  std::map<std::string, std::optional<std::string>> changes(props.begin(), props.end());
  for (const auto& [key, value] : broker.controller().view().broker_configs(name)) {
    if (!props.contains(key)) changes.emplace(key, std::nullopt);
  }
  return commit_broker_configs(broker, name, changes, validate_only);
}

ConfigOutcome alter(Broker& broker, const AlterConfigsRequest::AlterConfigsResource& resource,
                                     bool validate_only) {
  if (ConfigResourceType(resource.resource_type) == ConfigResourceType::kBroker) {
    return alter_broker(broker, resource, validate_only);
  }
  if (ConfigResourceType(resource.resource_type) != ConfigResourceType::kTopic) {
    return unsupported_alter_resource(resource.resource_type);
  }
  std::map<std::string, std::string> overrides;
  for (const auto& config : resource.configs) {
    if (config.value) overrides[config.name] = *config.value;
  }
  return replace_topic_overrides(broker, resource.resource_name, overrides, validate_only);
}

}  // namespace

void handle_alter_configs(Broker& broker, Request& request) {
  AlterConfigsRequest body;
  if (!request.decode(body)) return;

  alter_each_resource<AlterConfigsResponse>(broker, request, body.resources, [&](const auto& resource) {
    return alter(broker, resource, body.validate_only);
  });
}

}  // namespace samsa

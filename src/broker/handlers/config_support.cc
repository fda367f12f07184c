#include "broker/handlers/config_support.h"

#include "base/log.h"
#include "broker/broker.h"

namespace samsa {

using protocol::ErrorCode;

const char* config_resource_type_name(int8_t type) {
  switch (ConfigResourceType(type)) {
    case ConfigResourceType::kTopic: return "TOPIC";
    case ConfigResourceType::kBroker: return "BROKER";
    case ConfigResourceType::kBrokerLogger: return "BROKER_LOGGER";
    default: return "UNKNOWN";
  }
}

int8_t kafka_config_type(ConfigType type) {
  switch (type) {
    case ConfigType::kBoolean: return 1;
    case ConfigType::kString: return 2;
    case ConfigType::kInt: return 3;
    case ConfigType::kLong: return 5;
    case ConfigType::kDouble: return 6;
    case ConfigType::kList: return 7;
    case ConfigType::kPassword: return 9;
  }
  return 0;
}

ControllerError unsupported_alter_resource(int8_t resource_type) {
  switch (ConfigResourceType(resource_type)) {
    case ConfigResourceType::kBroker:
      return {ErrorCode::kInvalidRequest,
              "Dynamic broker configs are not supported: set broker configs in server.properties (or with "
              "--override) and restart the broker"};
    case ConfigResourceType::kBrokerLogger:
      return {ErrorCode::kInvalidRequest, "Broker logger configs are not supported"};
    default:
      return {ErrorCode::kInvalidRequest,
              "Unsupported resource type: " + std::to_string(resource_type) + " (" +
                  config_resource_type_name(resource_type) + ")"};
  }
}

std::set<std::pair<int8_t, std::string>> duplicate_resources(
    const std::vector<std::pair<int8_t, std::string>>& resources) {
  std::set<std::pair<int8_t, std::string>> seen;
  std::set<std::pair<int8_t, std::string>> duplicates;
  for (const auto& r : resources) {
    if (!seen.insert(r).second) duplicates.insert(r);
  }
  return duplicates;
}

std::optional<ControllerError> replace_topic_overrides(Broker& broker, const std::string& name,
                                                       const std::map<std::string, std::string>& overrides,
                                                       bool validate_only) {
  const TopicState* topic = broker.image().topic(name);
  if (!topic) return ControllerError{ErrorCode::kUnknownTopicOrPartition, "Topic " + name + " does not exist"};
  Status valid = broker.topic_configs().validate(overrides);
  if (!valid.ok()) return ControllerError{ErrorCode::kInvalidConfig, valid.error().message()};

  std::map<std::string, std::optional<std::string>> changes;
  for (const auto& [key, value] : topic->configs) {
    if (!overrides.contains(key)) changes.emplace(key, std::nullopt);
  }
  for (const auto& [key, value] : overrides) {
    auto current = topic->configs.find(key);
    if (current == topic->configs.end() || current->second != value) changes.emplace(key, value);
  }
  if (validate_only || changes.empty()) return std::nullopt;
  auto failed = broker.commit_plan(plan_alter_topic_configs(broker.image(), name, changes));
  if (!failed) LOG_INFO("controller", "altered {} config(s) of topic {}", changes.size(), name);
  return failed;
}

}  // namespace samsa

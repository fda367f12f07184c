#include "broker/handlers/config_support.h"

#include <charconv>

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
    case ConfigResourceType::kBrokerLogger:
      return {ErrorCode::kInvalidRequest, "Broker logger configs are not supported"};
    default:
      return {ErrorCode::kInvalidRequest,
              "Unsupported resource type: " + std::to_string(resource_type) + " (" +
                  config_resource_type_name(resource_type) + ")"};
  }
}

std::optional<ControllerError> check_broker_resource_name(const Broker& broker, const std::string& name) {
  if (name.empty()) return std::nullopt;
  int32_t id = 0;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), id);
  if (ec != std::errc() || end != name.data() + name.size()) {
    return ControllerError{ErrorCode::kInvalidRequest, "Node id must be an integer, but it is: " + name};
  }
  if (NodeId(id) != broker.node_id()) {
    return ControllerError{ErrorCode::kInvalidRequest, "Unexpected broker id, expected " +
                                                           std::to_string(broker.node_id().value()) +
                                                           ", but received " + name};
  }
  return std::nullopt;
}

std::optional<ControllerError> duplicate_keys_error(const std::vector<std::string>& names) {
  std::set<std::string> seen;
  for (const auto& n : names) {
    if (!seen.insert(n).second) {
      return ControllerError{ErrorCode::kInvalidRequest, "Error due to duplicate config keys"};
    }
  }
  return std::nullopt;
}

std::optional<ControllerError> null_values_error(const std::vector<std::string>& names) {
  if (names.empty()) return std::nullopt;
  std::string joined;
  for (const auto& n : names) joined += (joined.empty() ? "" : ", ") + n;
  return ControllerError{ErrorCode::kInvalidRequest, "Null value not supported for : " + joined};
}

std::optional<ControllerError> validate_broker_configs(const Broker& broker, const std::string& name,
                                                       const std::map<std::string, std::string>& props) {
  Status valid = broker.dynamic_config().validate(props, !name.empty());
  if (valid.ok()) return std::nullopt;
  return ControllerError{ErrorCode::kInvalidRequest, valid.error().message()};
}

ConfigOutcome commit_broker_configs(
    Broker& broker, const std::string& name, const std::map<std::string, std::optional<std::string>>& changes,
    bool validate_only) {
  (void)broker;
  if (validate_only || changes.empty()) return ConfigOutcome();
  std::vector<MetadataRecord> records;
  for (const auto& [key, value] : changes) {
    records.push_back(ConfigRecord{ConfigRecord::Resource::kBroker, name, key, value});
  }
  return ConfigOutcome::Commit{std::to_string(changes.size()) + " dynamic config(s) of broker resource \"" + name + "\"",
                               [records](const MetadataImage&) { return Plan(records); }};
}

void submit_config_commit(Broker& broker, ConfigOutcome::Commit commit, ControllerDone done) {
  broker.submit_change("the change of " + commit.what, commit.plan, 0,
                       [what = commit.what, done = std::move(done)](std::optional<ControllerError> e) {
                         if (!e) LOG_INFO("controller", "altered {}", what);
                         done(std::move(e));
                       });
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

ConfigOutcome replace_topic_overrides(Broker& broker, const std::string& name,
                                      const std::map<std::string, std::string>& overrides, bool validate_only) {
  const TopicState* topic = broker.controller().view().topic(name);
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
  if (validate_only || changes.empty()) return ConfigOutcome();
  return ConfigOutcome::Commit{std::to_string(changes.size()) + " config(s) of topic " + name,
                               [name, changes](const MetadataImage& view) {
                                 return plan_alter_topic_configs(view, name, changes);
                               }};
}

}  // namespace samsa

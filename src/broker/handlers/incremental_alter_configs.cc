// IncrementalAlterConfigs (v0-1): changes only the named keys of a TOPIC
// resource. SET replaces a key's override, DELETE removes it (back to the
// broker default), APPEND / SUBTRACT add or remove elements of a LIST key
// (cleanup.policy), starting from its effective value. The resulting
// override set is validated as a whole and committed through the metadata
// log unless validate_only. BROKER_LOGGER resources are refused with
// INVALID_REQUEST: Samsa has no broker logger configs.
//
// A BROKER resource ("" or this node's id) changes its dynamic configs as
// Kafka 3.9 does: ConfigAdminManager.preprocess checks duplicate keys, null
// values (but for DELETE), the name, then applies the operations to the
// stored set (prepareIncrementalConfigs) and validates the result
// (DynamicBrokerConfig::validate, INVALID_REQUEST); the controller
// (ConfigurationControlManager.incrementalAlterConfigResource) writes one
// record per named key. APPEND / SUBTRACT start from the stored value, else
// from Kafka's default of the key (not its static value).
#include <algorithm>
#include <set>

#include "broker/broker.h"
#include "broker/handlers/config_support.h"
#include "broker/handlers/handlers.h"
#include "broker/request.h"
#include "broker/topic_configs.h"
#include "protocol/error_code.h"
#include "protocol/generated/incremental_alter_configs.h"

namespace samsa {
namespace {

using protocol::ErrorCode;
using protocol::IncrementalAlterConfigsRequest;
using protocol::IncrementalAlterConfigsResponse;
using Resource = IncrementalAlterConfigsRequest::AlterConfigsResource;
using AlterableConfig = IncrementalAlterConfigsRequest::AlterableConfig;
using ResourceResponse = IncrementalAlterConfigsResponse::AlterConfigsResourceResponse;

// AlterConfigOp.OpType ids.
enum class OpType : int8_t { kSet = 0, kDelete = 1, kAppend = 2, kSubtract = 3 };

ControllerError error(ErrorCode code, std::string message) { return ControllerError{code, std::move(message)}; }

std::string trimmed(const std::string& s) {
  size_t begin = s.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  size_t end = s.find_last_not_of(" \t\r\n");
  return s.substr(begin, end - begin + 1);
}

Result<std::vector<std::string>> parse_list(const std::string& text) {
  ASSIGN_OR_RETURN(ConfigValue value, parse_config_value(ConfigType::kList, trimmed(text)));
  return std::get<std::vector<std::string>>(value);
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ",") + item;
  return out;
}

// APPEND / SUBTRACT on a list key, from its current override or, without
// one, from the broker-level default.
std::optional<ControllerError> apply_list_op(const TopicConfigs& configs, std::map<std::string, std::string>& overrides,
                                             const AlterableConfig& op) {
  bool append = OpType(op.config_operation) == OpType::kAppend;
  auto items = parse_list(*op.value);
  if (!items.ok()) return error(ErrorCode::kInvalidConfig, "Invalid value " + *op.value + " for " + op.name);
  std::vector<std::string> current;
  if (auto it = overrides.find(op.name); it != overrides.end()) {
    auto parsed = parse_list(it->second);
    if (!parsed.ok()) return error(ErrorCode::kInvalidConfig, "Invalid value " + it->second + " for " + op.name);
    current = std::move(parsed).value();
  } else {
    current = configs.broker_defaults().get_list(op.name);
  }
  for (const auto& item : *items) {
    if (append) {
      if (std::find(current.begin(), current.end(), item) == current.end()) current.push_back(item);
    } else {
      current.erase(std::remove(current.begin(), current.end(), item), current.end());
    }
  }
  overrides[op.name] = join(current);
  return std::nullopt;
}

std::optional<ControllerError> apply_op(const TopicConfigs& configs, std::map<std::string, std::string>& overrides,
                                        const AlterableConfig& op) {
  const ConfigKey* def = topic_config_definition().find(op.name);
  if (!def) return error(ErrorCode::kInvalidConfig, "Unknown topic config name: " + op.name);
  OpType type = OpType(op.config_operation);
  if (type == OpType::kDelete) {
    overrides.erase(op.name);
    return std::nullopt;
  }
  if (type != OpType::kSet && type != OpType::kAppend && type != OpType::kSubtract) {
    return error(ErrorCode::kInvalidRequest, "Unknown config operation " + std::to_string(op.config_operation));
  }
  if (!op.value) return error(ErrorCode::kInvalidRequest, "Null value not supported for : " + op.name);
  if (type == OpType::kSet) {
    overrides[op.name] = *op.value;
    return std::nullopt;
  }
  if (def->type != ConfigType::kList) {
    return error(ErrorCode::kInvalidConfig, std::string("Config value ") +
                                                (type == OpType::kAppend ? "append" : "subtract") +
                                                " is not allowed for config key: " + op.name);
  }
  return apply_list_op(configs, overrides, op);
}

// One operation on a broker resource's set. Splitting drops empty parts
// (ConfigurationControlManager.getParts).
std::optional<ControllerError> apply_broker_op(std::map<std::string, std::string>& props, const AlterableConfig& op) {
  OpType type = OpType(op.config_operation);
  if (type == OpType::kSet) {
    props[op.name] = *op.value;
    return std::nullopt;
  }
  if (type == OpType::kDelete) {
    props.erase(op.name);
    return std::nullopt;
  }
  const ConfigKey* key = find_broker_key(op.name);
  // (Kafka 3.9 answers UNKNOWN_SERVER_ERROR here, from a NoSuchElementException
  // where its code means "Unknown config name".)
  if (!key) return error(ErrorCode::kInvalidConfig, "Unknown config name: " + op.name);
  const bool append = type == OpType::kAppend;
  if (key->type != ConfigType::kList) {
    return error(ErrorCode::kInvalidConfig, std::string("Config value ") + (append ? "append" : "subtract") +
                                                " is not allowed for config key: " + op.name);
  }
  auto split = [](const std::string& text) {
    std::vector<std::string> parts;
    size_t begin = 0;
    while (begin <= text.size()) {
      size_t end = std::min(text.find(',', begin), text.size());
      if (end > begin) parts.push_back(text.substr(begin, end - begin));
      begin = end + 1;
    }
    return parts;
  };
  auto current = props.find(op.name);
  std::vector<std::string> items = split(current != props.end() ? current->second : key->default_value.value_or(""));
  for (const auto& item : split(*op.value)) {
    if (append) {
      if (std::find(items.begin(), items.end(), item) == items.end()) items.push_back(item);
    } else {
      items.erase(std::remove(items.begin(), items.end(), item), items.end());
    }
  }
  props[op.name] = join(items);
  return std::nullopt;
}

ConfigOutcome alter_broker(Broker& broker, const Resource& resource, bool validate_only) {
  std::vector<std::string> names;
  std::vector<std::string> nulls;
  for (const auto& op : resource.configs) {
    names.push_back(op.name);
    if (OpType(op.config_operation) != OpType::kDelete && !op.value) nulls.push_back(op.name);
  }
  if (auto e = duplicate_keys_error(names)) return e;
  if (auto e = null_values_error(nulls)) return e;
  const std::string& name = resource.resource_name;
  if (auto e = check_broker_resource_name(broker, name)) return e;
  for (const auto& op : resource.configs) {
    if (op.config_operation < int8_t(OpType::kSet) || op.config_operation > int8_t(OpType::kSubtract)) {
      return error(ErrorCode::kInvalidRequest, "Unknown operations type " + std::to_string(op.config_operation));
    }
  }
  const std::map<std::string, std::string>& stored = broker.controller().view().broker_configs(name);
  // What the broker validates: the usable part of the stored set, changed.
  std::map<std::string, std::string> next = broker.dynamic_config().usable(stored, nullptr);
  for (const auto& op : resource.configs) {
    if (auto e = apply_broker_op(next, op)) return e;
  }
  if (auto e = validate_broker_configs(broker, name, next)) return e;
  // What the controller writes: the named keys of the stored set, changed.
  std::map<std::string, std::string> written = stored;
  std::map<std::string, std::optional<std::string>> changes;
  for (const auto& op : resource.configs) {
    if (auto e = apply_broker_op(written, op)) return e;
    auto it = written.find(op.name);
    changes[op.name] = it == written.end() ? std::nullopt : std::optional(it->second);
  }
  return commit_broker_configs(broker, name, changes, validate_only);
}

ConfigOutcome alter(Broker& broker, const Resource& resource, bool validate_only) {
  if (ConfigResourceType(resource.resource_type) == ConfigResourceType::kBroker) {
    return alter_broker(broker, resource, validate_only);
  }
  if (ConfigResourceType(resource.resource_type) != ConfigResourceType::kTopic) {
    return unsupported_alter_resource(resource.resource_type);
  }
  std::set<std::string> names;
  for (const auto& op : resource.configs) {
    if (!names.insert(op.name).second) return error(ErrorCode::kInvalidRequest, "Error due to duplicate config keys");
  }
  const TopicState* topic = broker.controller().view().topic(resource.resource_name);
  if (!topic) {
    return error(ErrorCode::kUnknownTopicOrPartition, "Topic " + resource.resource_name + " does not exist");
  }
  std::map<std::string, std::string> overrides = topic->configs;
  for (const auto& op : resource.configs) {
    if (auto e = apply_op(broker.topic_configs(), overrides, op)) return e;
  }
  return replace_topic_overrides(broker, resource.resource_name, overrides, validate_only);
}


}  // namespace

void handle_incremental_alter_configs(Broker& broker, Request& request) {
  IncrementalAlterConfigsRequest body;
  if (!request.decode(body)) return;

  alter_each_resource<IncrementalAlterConfigsResponse>(broker, request, body.resources, [&](const auto& resource) {
    return alter(broker, resource, body.validate_only);
  });
}

}  // namespace samsa

// IncrementalAlterConfigs (v0-1): changes only the named keys of a TOPIC
// resource. SET replaces a key's override, DELETE removes it (back to the
// broker default), APPEND / SUBTRACT add or remove elements of a LIST key
// (cleanup.policy), starting from its effective value. The resulting
// override set is validated as a whole and committed through the metadata
// log unless validate_only. BROKER (and logger) resources are refused with
// INVALID_REQUEST: Samsa has no dynamic broker configs.
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

std::optional<ControllerError> alter(Broker& broker, const Resource& resource, bool validate_only) {
  if (ConfigResourceType(resource.resource_type) != ConfigResourceType::kTopic) {
    return unsupported_alter_resource(resource.resource_type);
  }
  std::set<std::string> names;
  for (const auto& op : resource.configs) {
    if (!names.insert(op.name).second) return error(ErrorCode::kInvalidRequest, "Error due to duplicate config keys");
  }
  const TopicState* topic = broker.image().topic(resource.resource_name);
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

  IncrementalAlterConfigsResponse response;
  response.responses = alter_each_resource<Resource, ResourceResponse>(
      body.resources, [&](const auto& resource) { return alter(broker, resource, body.validate_only); });
  request.respond(response);
}

}  // namespace samsa

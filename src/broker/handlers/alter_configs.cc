// AlterConfigs (v0-2), the legacy, non-incremental form: a TOPIC resource's
// configs become exactly the ones given — keys left out lose their override
// and fall back to the broker default (Kafka's semantics; entries with a
// null value are ignored, as Kafka does). Validated as a whole (unknown key
// or bad value: INVALID_CONFIG naming it), then committed through the
// metadata log unless validate_only. BROKER resources are refused with
// INVALID_REQUEST: Samsa has no dynamic broker configs.
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

ResourceResponse response_for(const AlterConfigsRequest::AlterConfigsResource& resource,
                              const std::optional<ControllerError>& error) {
  ResourceResponse out;
  out.resource_type = resource.resource_type;
  out.resource_name = resource.resource_name;
  out.error_code = int16_t(error ? error->code : ErrorCode::kNone);
  out.error_message = error ? std::optional(error->message) : std::nullopt;
  return out;
}

std::optional<ControllerError> alter(Broker& broker, const AlterConfigsRequest::AlterConfigsResource& resource,
                                     bool validate_only) {
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

  std::vector<std::pair<int8_t, std::string>> keys;
  for (const auto& r : body.resources) keys.emplace_back(r.resource_type, r.resource_name);
  const auto duplicates = duplicate_resources(keys);

  AlterConfigsResponse response;
  std::set<std::pair<int8_t, std::string>> answered;  // a duplicated resource is answered once
  for (const auto& resource : body.resources) {
    auto key = std::make_pair(resource.resource_type, resource.resource_name);
    if (!answered.insert(key).second) continue;
    auto error = duplicates.contains(key)
                     ? std::optional(ControllerError{ErrorCode::kInvalidRequest, "Duplicate resource in request."})
                     : alter(broker, resource, body.validate_only);
    response.responses.push_back(response_for(resource, error));
  }
  request.respond(response);
}

}  // namespace samsa

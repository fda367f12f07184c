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

  AlterConfigsResponse response;
  response.responses = alter_each_resource<AlterConfigsRequest::AlterConfigsResource, ResourceResponse>(
      body.resources, [&](const auto& resource) { return alter(broker, resource, body.validate_only); });
  request.respond(response);
}

}  // namespace samsa

// DescribeConfigs (v0-4) for TOPIC and BROKER resources.
//
// A topic shows every topic key with its effective value and source: the
// topic's override (DYNAMIC_TOPIC_CONFIG), else the broker's setting of the
// synonym key (STATIC_BROKER_CONFIG), else Kafka's default (DEFAULT_CONFIG).
// With synonyms (v1+) the entry lists those layers, most specific first, as
// Kafka does; synonyms of broker layers carry the broker key's name
// ("log.retention.ms" for "retention.ms").
//
// The broker resource named after this node shows every broker key
// (read-only: Samsa has no dynamic broker configs). The empty name asks for
// the cluster-wide dynamic defaults, of which there are none: an empty list,
// as Kafka answers when none are set. Sensitive values are null.
// v0 reports is_default instead of config_source; v3+ adds config_type and,
// on request, documentation.
#include <algorithm>
#include <charconv>

#include "broker/broker.h"
#include "broker/handlers/config_support.h"
#include "broker/handlers/handlers.h"
#include "broker/request.h"
#include "broker/topic_configs.h"
#include "controller/topic_rules.h"
#include "protocol/error_code.h"
#include "protocol/generated/describe_configs.h"

namespace samsa {
namespace {

using protocol::DescribeConfigsRequest;
using protocol::DescribeConfigsResponse;
using protocol::ErrorCode;
using ResourceResult = DescribeConfigsResponse::DescribeConfigsResult;
using ConfigEntry = DescribeConfigsResponse::DescribeConfigsResourceResult;
using Synonym = DescribeConfigsResponse::DescribeConfigsSynonym;

struct Options {
  bool synonyms = false;
  bool documentation = false;
};

bool wanted(const DescribeConfigsRequest::DescribeConfigsResource& resource, const std::string& key) {
  if (!resource.configuration_keys) return true;
  const auto& keys = *resource.configuration_keys;
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

Synonym synonym(std::string name, std::optional<std::string> value, ConfigSource source) {
  Synonym s;
  s.name = std::move(name);
  s.value = std::move(value);
  s.source = int8_t(source);
  return s;
}

ConfigEntry entry_for(const std::string& name, const ConfigValues& values, bool read_only, const ConfigKey& key,
                      std::vector<Synonym> synonyms, const Options& options) {
  const ConfigValues::Entry& e = values.entry(name);
  ConfigEntry out;
  out.name = name;
  out.value = values.describe_value(name);
  out.read_only = read_only;
  out.is_default = e.source == ConfigSource::kDefault;
  out.config_source = int8_t(e.source);
  out.is_sensitive = e.sensitive;
  if (options.synonyms) out.synonyms = std::move(synonyms);
  out.config_type = kafka_config_type(e.type);
  out.documentation = options.documentation ? std::optional(key.doc) : std::nullopt;
  return out;
}

ResourceResult resource_error(const DescribeConfigsRequest::DescribeConfigsResource& resource, ErrorCode code,
                              std::string message) {
  ResourceResult out;
  out.resource_type = resource.resource_type;
  out.resource_name = resource.resource_name;
  out.error_code = int16_t(code);
  out.error_message = std::move(message);
  return out;
}

ResourceResult empty_result(const DescribeConfigsRequest::DescribeConfigsResource& resource) {
  ResourceResult out;
  out.resource_type = resource.resource_type;
  out.resource_name = resource.resource_name;
  out.error_message = std::nullopt;
  return out;
}

// The layers under a topic key, most specific first.
std::vector<Synonym> topic_synonyms(const std::string& key, const TopicState& topic, const ConfigValues& values,
                                    const TopicConfigs& configs, const ConfigKey& def) {
  std::vector<Synonym> out;
  bool sensitive = values.entry(key).sensitive;
  if (topic.configs.contains(key)) out.push_back(synonym(key, values.describe_value(key), ConfigSource::kDynamicTopic));
  const char* broker_key = broker_synonym(key);
  std::string layer_name = broker_key ? broker_key : key;
  const ConfigValues& broker_layer = configs.broker_defaults();
  if (broker_layer.source(key) == ConfigSource::kStaticBroker) {
    out.push_back(synonym(layer_name, broker_layer.describe_value(key), ConfigSource::kStaticBroker));
  }
  if (def.default_value) {
    out.push_back(synonym(layer_name, sensitive ? std::nullopt : def.default_value, ConfigSource::kDefault));
  }
  return out;
}

ResourceResult describe_topic(Broker& broker, const DescribeConfigsRequest::DescribeConfigsResource& resource,
                              const Options& options) {
  const std::string& name = resource.resource_name;
  if (auto reason = invalid_topic_name_reason(name)) {
    return resource_error(resource, ErrorCode::kInvalidTopicException, *reason);
  }
  const TopicState* topic = broker.image().topic(name);
  if (!topic) return resource_error(resource, ErrorCode::kUnknownTopicOrPartition, "Topic " + name + " does not exist");

  const TopicConfigs& configs = broker.topic_configs();
  ConfigValues values = configs.values_for(topic->configs);
  ResourceResult out = empty_result(resource);
  for (const auto& [key, entry] : values.entries()) {
    if (!wanted(resource, key)) continue;
    const ConfigKey& def = *topic_config_definition().find(key);
    auto synonyms = topic_synonyms(key, *topic, values, configs, def);
    out.configs.push_back(entry_for(key, values, false, def, std::move(synonyms), options));
  }
  return out;
}

std::vector<Synonym> broker_synonyms(const std::string& key, const ConfigValues& values, const ConfigKey& def) {
  std::vector<Synonym> out;
  bool sensitive = values.entry(key).sensitive;
  if (!values.is_default(key)) out.push_back(synonym(key, values.describe_value(key), values.source(key)));
  if (def.default_value) {
    out.push_back(synonym(key, sensitive ? std::nullopt : def.default_value, ConfigSource::kDefault));
  }
  return out;
}

ResourceResult describe_broker(Broker& broker, const DescribeConfigsRequest::DescribeConfigsResource& resource,
                               const Options& options) {
  const std::string& name = resource.resource_name;
  if (name.empty()) return empty_result(resource);  // no dynamic cluster-wide defaults exist
  int32_t id = 0;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), id);
  if (ec != std::errc() || end != name.data() + name.size()) {
    return resource_error(resource, ErrorCode::kInvalidRequest, "Broker id must be an integer, but it is: " + name);
  }
  if (NodeId(id) != broker.node_id()) {
    return resource_error(resource, ErrorCode::kInvalidRequest,
                          "Unexpected broker id, expected " + std::to_string(broker.node_id().value()) +
                              " or empty string, but received " + name);
  }
  const ConfigValues& values = broker.config().values();
  ResourceResult out = empty_result(resource);
  for (const auto& [key, entry] : values.entries()) {
    if (!wanted(resource, key)) continue;
    const ConfigKey& def = *BrokerConfig::definition().find(key);
    out.configs.push_back(entry_for(key, values, true, def, broker_synonyms(key, values, def), options));
  }
  return out;
}

}  // namespace

void handle_describe_configs(Broker& broker, Request& request) {
  DescribeConfigsRequest body;
  if (!request.decode(body)) return;
  Options options{body.include_synonyms, body.include_documentation};

  DescribeConfigsResponse response;
  for (const auto& resource : body.resources) {
    switch (ConfigResourceType(resource.resource_type)) {
      case ConfigResourceType::kTopic:
        response.results.push_back(describe_topic(broker, resource, options));
        break;
      case ConfigResourceType::kBroker:
        response.results.push_back(describe_broker(broker, resource, options));
        break;
      default:
        response.results.push_back(resource_error(resource, ErrorCode::kInvalidRequest,
                                                  std::string("Unsupported resource type: ") +
                                                      config_resource_type_name(resource.resource_type)));
    }
  }
  request.respond(response);
}

}  // namespace samsa

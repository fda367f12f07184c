// DescribeConfigs (v0-4) for TOPIC and BROKER resources, as Kafka 3.9's
// ConfigHelper.scala.
//
// A topic shows every topic key with its effective value. Its synonyms are
// the topic's override (DYNAMIC_TOPIC_CONFIG), then every broker layer's
// setting of the broker key and its synonyms (DynamicBrokerConfig::synonyms:
// "log.retention.ms" for "retention.ms"); the source is the first synonym's,
// DEFAULT_CONFIG when there is none. Kafka starts the broker part at the
// first entry named like the broker key itself, so a broker key whose
// Kafka default is null (log.retention.ms) and which no layer sets lists no
// synonym at all.
//
// The broker resource named after this node shows every broker key with
// the value in effect and its layers (DYNAMIC_BROKER_CONFIG,
// DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG);
// read_only unless the key is dynamic. The empty name shows the cluster-wide
// dynamic defaults that are set, each with only that layer. A key Samsa does
// not define (a custom key set dynamically) is sensitive, as in Kafka.
// v0 reports is_default instead of config_source; v3+ adds config_type and,
// on request, documentation.
#include <algorithm>
#include <charconv>

#include "broker/broker.h"
#include "broker/handlers/config_support.h"
#include "broker/handlers/handlers.h"
#include "broker/request.h"
#include "broker/topic_configs.h"
#include "config/dynamic_broker_config.h"
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

// Kafka (ConfigHelper.createResponseConfig): null or empty keys ask for all.
bool wanted(const DescribeConfigsRequest::DescribeConfigsResource& resource, const std::string& key) {
  if (!resource.configuration_keys || resource.configuration_keys->empty()) return true;
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

std::vector<Synonym> broker_layer_synonyms(const DynamicBrokerConfig& layers, const std::string& key, bool sensitive,
                                           bool per_broker) {
  std::vector<Synonym> out;
  for (const ConfigLayerValue& s : layers.synonyms(key)) {
    if (!per_broker && s.source != ConfigSource::kDynamicDefaultBroker) continue;
    out.push_back(synonym(s.name, sensitive ? std::nullopt : s.value, s.source));
  }
  return out;
}

// The layers under a topic key, most specific first.
std::vector<Synonym> topic_synonyms(const Broker& broker, const std::string& key, const TopicState& topic,
                                    const ConfigValues& values) {
  std::vector<Synonym> out;
  bool sensitive = values.entry(key).sensitive;
  if (topic.configs.contains(key)) out.push_back(synonym(key, values.describe_value(key), ConfigSource::kDynamicTopic));
  if (const char* broker_key = broker_synonym(key)) {
    auto layers = broker_layer_synonyms(broker.dynamic_config(), broker_key, sensitive, true);
    out.insert(out.end(), layers.begin(), layers.end());
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
    auto synonyms = topic_synonyms(broker, key, *topic, values);
    ConfigSource source = synonyms.empty() ? ConfigSource::kDefault : ConfigSource(synonyms.front().source);
    ConfigEntry e = entry_for(key, values, false, def, std::move(synonyms), options);
    e.config_source = int8_t(source);
    e.is_default = source == ConfigSource::kDefault;
    out.configs.push_back(std::move(e));
  }
  return out;
}

// One broker key: Kafka's createBrokerConfigEntry. Sensitive: a password,
// or a key of unknown type (Kafka's maybeSensitive).
ConfigEntry broker_entry(const Broker& broker, const std::string& name, std::optional<std::string> value,
                         bool per_broker, const Options& options) {
  const ConfigKey* key = find_broker_key(name);
  const bool sensitive = key == nullptr || key->type == ConfigType::kPassword;
  auto synonyms = broker_layer_synonyms(broker.dynamic_config(), name, sensitive, per_broker);
  ConfigSource source = synonyms.empty() ? ConfigSource::kDefault : ConfigSource(synonyms.front().source);
  ConfigEntry out;
  out.name = name;
  out.value = sensitive ? std::nullopt : std::move(value);
  out.read_only = !is_dynamic_broker_key(name);
  out.is_default = source == ConfigSource::kDefault;
  out.config_source = int8_t(source);
  out.is_sensitive = sensitive;
  if (options.synonyms) out.synonyms = std::move(synonyms);
  out.config_type = key ? kafka_config_type(key->type) : 0;  // 0: UNKNOWN
  out.documentation = options.documentation && key ? std::optional(key->doc) : std::nullopt;
  return out;
}

ResourceResult describe_broker(Broker& broker, const DescribeConfigsRequest::DescribeConfigsResource& resource,
                               const Options& options) {
  const std::string& name = resource.resource_name;
  ResourceResult out = empty_result(resource);
  if (name.empty()) {  // the cluster-wide defaults that are set
    for (const auto& [key, value] : broker.dynamic_config().dynamic_default()) {
      if (wanted(resource, key)) out.configs.push_back(broker_entry(broker, key, value, false, options));
    }
    return out;
  }
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
  // Every defined key with its value in effect, then the keys set (for
  // example dynamically) that no definition of server.properties knows.
  const ConfigValues& values = broker.effective_config().values();
  std::map<std::string, std::optional<std::string>> shown;
  for (const auto& [key, entry] : values.entries()) shown.emplace(key, values.describe_value(key));
  for (const auto& [key, value] : broker.dynamic_config().effective_properties()) shown.emplace(key, value);
  for (const auto& [key, value] : shown) {
    if (wanted(resource, key)) out.configs.push_back(broker_entry(broker, key, value, true, options));
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

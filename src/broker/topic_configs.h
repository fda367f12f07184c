#pragma once
// Topic-level configs (Kafka's LogConfig keys: retention.ms, segment.bytes,
// cleanup.policy, ...): their definitions, their defaults taken from the
// broker's `log.*` keys, and the typed LogConfig storage runs on. A topic's
// value is layered: Kafka's default < the broker's setting (STATIC_BROKER,
// or a dynamic broker config: DYNAMIC_DEFAULT_BROKER / DYNAMIC_BROKER) <
// the topic's override (DYNAMIC_TOPIC).

#include <map>
#include <optional>
#include <string>

#include "base/config_def.h"
#include "config/broker_config.h"
#include "storage/log_config.h"

namespace samsa {

const ConfigDef& topic_config_definition();

// The broker key that sets a topic key's default ("log.retention.ms" for
// "retention.ms"), or nullptr.
const char* broker_synonym(const std::string& topic_key);

class TopicConfigs {
 public:
  // `broker`: the configuration in effect; `sources`: which layer set each
  // broker key (DynamicBrokerConfig::effective_sources), STATIC_BROKER for
  // a key not in it.
  explicit TopicConfigs(const BrokerConfig& broker, const std::map<std::string, ConfigSource>& sources = {});

  // Every topic key with its value and source for a topic's overrides.
  // Overrides are validated when set, so this only fails on a bug.
  ConfigValues values_for(const std::map<std::string, std::string>& overrides) const;
  LogConfig log_config_for(const std::map<std::string, std::string>& overrides) const;
  // Checks overrides for CreateTopics/AlterConfigs; the error names the key.
  Status validate(const std::map<std::string, std::string>& overrides) const;
  const ConfigValues& broker_defaults() const { return defaults_; }

 private:
  ConfigValues defaults_;
};

LogConfig to_log_config(const ConfigValues& values);

}  // namespace samsa

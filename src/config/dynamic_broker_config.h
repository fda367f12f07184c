#pragma once
// DynamicBrokerConfig: the layers of a broker's configuration and Kafka's
// rules for the dynamic ones (KIP-226), after Kafka 3.9's
// DynamicBrokerConfig.scala, ConfigAdminManager.scala and ConfigHelper.scala.
//
// A key's value comes from the first layer that sets it or one of its
// synonyms (log.retention.ms / .minutes / .hours), highest first:
//   DYNAMIC_BROKER_CONFIG          (BROKER resource "<this node's id>")
//   DYNAMIC_DEFAULT_BROKER_CONFIG  (BROKER resource "", cluster-wide)
//   STATIC_BROKER_CONFIG           (server.properties, --override)
//   DEFAULT_CONFIG                 (Kafka's default)
// A topic's own override sits above all four (topic_configs.h).
//
// The dynamic layers are stored in the metadata log (ConfigRecord, resource
// type BROKER) and given here after every replay; this class only decides.
// Pure: no I/O, no clock. Not thread-safe; the broker's loop owns it.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/config_def.h"
#include "base/result.h"
#include "config/broker_config.h"

namespace samsa {

using ConfigMap = std::map<std::string, std::string>;

// The names that set the same value, highest precedence first (Kafka's
// DynamicBrokerConfig.brokerConfigSynonyms); a key without synonyms is alone.
std::vector<std::string> broker_config_synonyms(const std::string& name);

// Keys Kafka 3.9 updates without a restart (DynamicBrokerConfig.AllDynamicConfigs)
// that Samsa defines, less the listener keys, which Samsa cannot change while
// running. docs/configuration.md, "Dynamic broker configs". (The quota keys
// of find_broker_key are dynamic too, but not in this set: Kafka describes
// them read-only.)
bool is_dynamic_broker_key(const std::string& name);

// The definition of a broker key: server.properties keys, then the keys that
// exist only dynamically (Kafka's broker quota keys, QuotaConfigs). nullptr
// for a custom key, which Kafka accepts, stores and describes as sensitive.
const ConfigKey* find_broker_key(const std::string& name);

// One layer's setting of one name, as DescribeConfigs lists synonyms.
struct ConfigLayerValue {
  std::string name;
  std::optional<std::string> value;
  ConfigSource source;
};

class DynamicBrokerConfig {
 public:
  // static_props: what server.properties and --override set.
  explicit DynamicBrokerConfig(ConfigMap static_props);
  // The static layer of a parsed config: every key its source says was given.
  static DynamicBrokerConfig from(const BrokerConfig& config);

  // Kafka's DynamicBrokerConfig.validate for a new set of one resource's
  // dynamic configs (per_broker: this node's id, else the cluster default).
  // The error message is the one Kafka answers with INVALID_REQUEST:
  // "Cannot update these configs dynamically: Set(node.id)", a ConfigDef
  // message for a bad value, or what the resulting configuration breaks.
  Status validate(const ConfigMap& props, bool per_broker) const;

  // What of a stored set applies (Kafka's fromPersistentProps): keys with
  // invalid values and non-dynamic keys are left out and named in `dropped`.
  ConfigMap usable(const ConfigMap& stored, std::vector<std::string>* dropped) const;

  // Replaces a dynamic layer by a stored set (filtered through usable()).
  // Returns the keys left out.
  std::vector<std::string> set_dynamic(const ConfigMap& stored, bool per_broker);

  const ConfigMap& static_props() const { return static_; }
  const ConfigMap& dynamic_default() const { return dynamic_default_; }
  const ConfigMap& dynamic_broker() const { return dynamic_broker_; }

  // The properties in effect: static, overridden by the cluster default,
  // overridden by this broker's; a key that overrides removes its synonyms
  // from the lower layers, so the dynamic log.retention.hours beats a static
  // log.retention.ms (Kafka's overrideProps).
  ConfigMap effective_properties() const;
  // Which layer each effective property came from.
  std::map<std::string, ConfigSource> effective_sources() const;
  Result<BrokerConfig> effective_config() const;

  // Kafka's configSynonyms: every layer's setting of `name`'s synonyms,
  // layer by layer (highest first) and synonym by synonym, starting at the
  // first entry named `name` itself.
  std::vector<ConfigLayerValue> synonyms(const std::string& name) const;

 private:
  ConfigMap merged(const ConfigMap* candidate, bool candidate_per_broker) const;

  ConfigMap static_;
  ConfigMap defaults_;  // Kafka's defaults, non-null ones only
  ConfigMap dynamic_default_;
  ConfigMap dynamic_broker_;
};

}  // namespace samsa

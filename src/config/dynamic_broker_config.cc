#include "config/dynamic_broker_config.h"

#include <algorithm>
#include <set>

namespace samsa {
namespace {

// Kafka 3.9's AllDynamicConfigs, as far as Samsa defines the keys:
// DynamicLogConfig (the broker synonyms of topic keys, less
// log.message.format.version), LogCleaner, DynamicThreadPool,
// SocketServer, the cluster-level listener keys (max.connections,
// num.network.threads) and DynamicProducerStateManagerConfig. Left out:
// listeners, advertised.listeners and listener.security.protocol.map,
// which Kafka changes per broker and Samsa only at a restart.
const std::set<std::string>& dynamic_keys() {
  static const std::set<std::string> keys = {
      // DynamicLogConfig.ReconfigurableConfigs
      "log.segment.bytes", "log.roll.ms", "log.roll.jitter.ms", "log.index.size.max.bytes",
      "log.flush.interval.messages", "log.flush.interval.ms", "log.retention.bytes", "log.retention.ms",
      "message.max.bytes", "log.index.interval.bytes", "log.cleaner.delete.retention.ms",
      "log.cleaner.min.compaction.lag.ms", "log.cleaner.max.compaction.lag.ms", "log.segment.delete.delay.ms",
      "log.cleaner.min.cleanable.ratio", "log.cleanup.policy", "unclean.leader.election.enable",
      "min.insync.replicas", "compression.type", "log.preallocate", "log.message.timestamp.type",
      "log.message.timestamp.before.max.ms", "log.message.timestamp.after.max.ms",
      "log.message.downconversion.enable",
      // LogCleaner.ReconfigurableConfigs
      "log.cleaner.threads", "log.cleaner.dedupe.buffer.size", "log.cleaner.io.buffer.size",
      "log.cleaner.io.max.bytes.per.second", "log.cleaner.backoff.ms",
      // DynamicThreadPool.ReconfigurableConfigs, and num.network.threads
      "num.io.threads", "num.replica.fetchers", "num.recovery.threads.per.data.dir", "background.threads",
      "num.network.threads",
      // SocketServer.ReconfigurableConfigs
      "max.connections", "max.connections.per.ip",
      // DynamicProducerStateManagerConfig
      "producer.id.expiration.ms",
  };
  return keys;
}

// Kafka's QuotaConfigs.brokerQuotaConfigs: broker keys that exist only as
// dynamic configs (not in server.properties' KafkaConfig).
const ConfigDef& quota_definition() {
  static const ConfigDef def = [] {
    ConfigDef d;
    const char* const long_max = "9223372036854775807";
    d.define({"leader.replication.throttled.rate", ConfigType::kLong, long_max, false,
              ConfigValidator::at_least(0), ConfigImportance::kMedium,
              "Replication bytes/s a leader may send for throttled replicas (accepted; Samsa does not throttle)."});
    d.define({"follower.replication.throttled.rate", ConfigType::kLong, long_max, false,
              ConfigValidator::at_least(0), ConfigImportance::kMedium,
              "Replication bytes/s a follower may fetch for throttled replicas (accepted; Samsa does not throttle)."});
    d.define({"replica.alter.log.dirs.io.max.bytes.per.second", ConfigType::kLong, long_max, false,
              ConfigValidator::at_least(0), ConfigImportance::kMedium,
              "Bytes/s for moving replicas between log dirs (accepted; Samsa does not move replicas)."});
    return d;
  }();
  return def;
}

// Scala's Set.toString, as Kafka's messages print a set of names (sorted
// here; Scala's order is its hash order).
std::string scala_set(const std::set<std::string>& names) {
  std::string out = "Set(";
  for (const auto& n : names) out += (out.size() > 4 ? ", " : "") + n;
  return out + ")";
}

Error invalid(std::string message) { return Error(ErrorKind::kInvalidArgument, std::move(message)); }

// How Kafka reports a failed validateReconfiguration: wrapped as
// ConfigException("Invalid dynamic configuration", cause), whose
// (name, value) constructor makes this message.
Error reconfiguration_error(const std::string& cause) {
  return invalid("Invalid value org.apache.kafka.common.config.ConfigException: " + cause +
                 " for configuration Invalid dynamic configuration");
}

// DynamicThreadPool.validateReconfiguration (and the acceptor's, for
// num.network.threads, and LogCleaner's): a thread count may at most double
// or halve in one change.
Status check_thread_counts(const BrokerConfig& current, const BrokerConfig& next) {
  for (const char* key : {"num.io.threads", "num.replica.fetchers", "num.recovery.threads.per.data.dir",
                          "background.threads", "num.network.threads"}) {
    int32_t now = current.values().get_int(key);
    int32_t wanted = next.values().get_int(key);
    if (wanted == now) continue;
    std::string prefix = std::string("Dynamic thread count update validation failed for ") + key + "=" +
                         std::to_string(wanted);
    if (wanted <= 0) return reconfiguration_error(prefix + ", value should be at least 1");
    if (wanted < now / 2) {
      return reconfiguration_error(prefix + ", value should be at least half the current value " + std::to_string(now));
    }
    if (wanted > now * 2) {
      return reconfiguration_error(prefix + ", value should not be greater than double the current value " +
                                   std::to_string(now));
    }
  }
  int32_t now = current.values().get_int("log.cleaner.threads");
  int32_t wanted = next.values().get_int("log.cleaner.threads");
  if (wanted == now) return ok_status();
  if (wanted < 1) return reconfiguration_error("Log cleaner threads should be at least 1");
  if (wanted < now / 2) {
    return reconfiguration_error("Log cleaner threads cannot be reduced to less than half the current value " +
                                 std::to_string(now));
  }
  if (wanted > now * 2) {
    return reconfiguration_error("Log cleaner threads cannot be increased to more than double the current value " +
                                 std::to_string(now));
  }
  return ok_status();
}

bool is_static_only(const std::string& name) {
  return BrokerConfig::definition().find(name) != nullptr && !is_dynamic_broker_key(name);
}

Status check_value(const std::string& name, const std::string& value) {
  const ConfigKey* key = BrokerConfig::definition().find(name);
  const ConfigDef& def = key ? BrokerConfig::definition() : quota_definition();
  if (!key && !def.find(name)) return ok_status();  // custom keys are not checked (Kafka: customPropsAllowed)
  return def.validate(name, value);
}

// overrideProps: each key of `layer` replaces its synonyms in `props`.
void override_props(ConfigMap& props, const ConfigMap& layer) {
  for (const auto& [key, value] : layer) {
    for (const auto& synonym : broker_config_synonyms(key)) props.erase(synonym);
    props[key] = value;
  }
}

}  // namespace

std::vector<std::string> broker_config_synonyms(const std::string& name) {
  static const std::vector<std::vector<std::string>> groups = {
      {"log.roll.ms", "log.roll.hours"},
      {"log.roll.jitter.ms", "log.roll.jitter.hours"},
      {"log.flush.interval.ms", "log.flush.scheduler.interval.ms"},
      {"log.retention.ms", "log.retention.minutes", "log.retention.hours"},
  };
  for (const auto& group : groups) {
    // log.flush.scheduler.interval.ms is only the default of log.flush.interval.ms,
    // not its synonym the other way round (Kafka matches only the first name).
    if (group.front() == "log.flush.interval.ms" && name != group.front()) continue;
    if (std::find(group.begin(), group.end(), name) != group.end()) return group;
  }
  return {name};
}

bool is_dynamic_broker_key(const std::string& name) { return dynamic_keys().contains(name); }

const ConfigKey* find_broker_key(const std::string& name) {
  if (const ConfigKey* key = BrokerConfig::definition().find(name)) return key;
  return quota_definition().find(name);
}

DynamicBrokerConfig::DynamicBrokerConfig(ConfigMap static_props) : static_(std::move(static_props)) {
  for (const ConfigKey& key : BrokerConfig::definition().keys()) {
    if (key.default_value) defaults_[key.name] = *key.default_value;
  }
}

DynamicBrokerConfig DynamicBrokerConfig::from(const BrokerConfig& config) {
  ConfigMap given;
  for (const auto& [name, entry] : config.values().entries()) {
    if (entry.source == ConfigSource::kStaticBroker && entry.raw) given[name] = *entry.raw;
  }
  return DynamicBrokerConfig(std::move(given));
}

Status DynamicBrokerConfig::validate(const ConfigMap& props, bool per_broker) const {
  std::set<std::string> static_only;
  for (const auto& [key, value] : props) {
    if (is_static_only(key)) static_only.insert(key);
  }
  if (!static_only.empty()) return invalid("Cannot update these configs dynamically: " + scala_set(static_only));
  for (const auto& [key, value] : props) RETURN_IF_ERROR(check_value(key, value));
  // (No key is per-broker only here: those are Kafka's listener and SSL
  // keys, which Samsa refuses above or does not define.)
  auto next = BrokerConfig::from_properties(merged(&props, per_broker));
  if (!next.ok()) return invalid(next.error().message());
  auto current = effective_config();
  if (!current.ok()) return ok_status();  // nothing to compare with; the new set is valid on its own
  return check_thread_counts(*current, *next);
}

ConfigMap DynamicBrokerConfig::usable(const ConfigMap& stored, std::vector<std::string>* dropped) const {
  ConfigMap out;
  for (const auto& [key, value] : stored) {
    if (is_static_only(key) || !check_value(key, value).ok()) {
      if (dropped) dropped->push_back(key);
      continue;
    }
    out.emplace(key, value);
  }
  return out;
}

std::vector<std::string> DynamicBrokerConfig::set_dynamic(const ConfigMap& stored, bool per_broker) {
  std::vector<std::string> dropped;
  (per_broker ? dynamic_broker_ : dynamic_default_) = usable(stored, &dropped);
  return dropped;
}

ConfigMap DynamicBrokerConfig::merged(const ConfigMap* candidate, bool candidate_per_broker) const {
  ConfigMap props = static_;
  const ConfigMap& cluster = candidate && !candidate_per_broker ? *candidate : dynamic_default_;
  const ConfigMap& broker = candidate && candidate_per_broker ? *candidate : dynamic_broker_;
  override_props(props, cluster);
  override_props(props, broker);
  return props;
}

ConfigMap DynamicBrokerConfig::effective_properties() const { return merged(nullptr, false); }

std::map<std::string, ConfigSource> DynamicBrokerConfig::effective_sources() const {
  std::map<std::string, ConfigSource> out;
  for (const auto& [key, value] : effective_properties()) {
    out[key] = dynamic_broker_.contains(key)    ? ConfigSource::kDynamicBroker
               : dynamic_default_.contains(key) ? ConfigSource::kDynamicDefaultBroker
                                                : ConfigSource::kStaticBroker;
  }
  return out;
}

Result<BrokerConfig> DynamicBrokerConfig::effective_config() const {
  return BrokerConfig::from_properties(effective_properties());
}

std::vector<ConfigLayerValue> DynamicBrokerConfig::synonyms(const std::string& name) const {
  const std::vector<std::string> names = broker_config_synonyms(name);
  const std::pair<const ConfigMap*, ConfigSource> layers[] = {
      {&dynamic_broker_, ConfigSource::kDynamicBroker},
      {&dynamic_default_, ConfigSource::kDynamicDefaultBroker},
      {&static_, ConfigSource::kStaticBroker},
      {&defaults_, ConfigSource::kDefault},
  };
  std::vector<ConfigLayerValue> out;
  for (const auto& [layer, source] : layers) {
    for (const auto& n : names) {
      auto it = layer->find(n);
      if (it != layer->end()) out.push_back({n, it->second, source});
    }
  }
  // Kafka's dropWhile(_.name != name): what ranks above the name itself is
  // another name's entry (log.retention.ms above log.retention.hours).
  auto first = std::find_if(out.begin(), out.end(), [&](const ConfigLayerValue& s) { return s.name == name; });
  out.erase(out.begin(), first);
  return out;
}

}  // namespace samsa

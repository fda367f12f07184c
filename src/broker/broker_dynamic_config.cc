// The Broker's side of dynamic broker configs: after the metadata log
// changes a BROKER resource's configs (or at start, after its replay), the
// layers are re-read and what depends on them rebuilt, so a topic without
// its own override sees a new log.* default at once (Kafka's
// DynamicLogConfig.reconfigure; ReplicaManager::apply_image then hands every
// partition its new LogConfig), and the log cleaner its new settings
// (LogCleaner.reconfigure).
#include "base/log.h"
#include "broker/broker.h"

namespace samsa {

bool changes_broker_configs(const std::vector<MetadataRecord>& records) {
  for (const auto& record : records) {
    const auto* config = std::get_if<ConfigRecord>(&record);
    if (config && config->resource == ConfigRecord::Resource::kBroker) return true;
  }
  return false;
}

CleanerConfig cleaner_config(const ConfigValues& values) {
  CleanerConfig c;
  c.enable = values.get_bool("log.cleaner.enable");
  c.map_max_bytes = values.get_long("log.cleaner.dedupe.buffer.size");
  c.backoff_ms = values.get_long("log.cleaner.backoff.ms");
  return c;
}

void Broker::reload_dynamic_config() {
  if (!dynamic_config_) dynamic_config_ = std::make_unique<DynamicBrokerConfig>(DynamicBrokerConfig::from(*config_));
  for (bool per_broker : {false, true}) {
    const std::string resource = per_broker ? std::to_string(node_id().value()) : "";
    std::vector<std::string> dropped = dynamic_config_->set_dynamic(image().broker_configs(resource), per_broker);
    // Kafka's fromPersistentProps logs and ignores these the same way.
    for (const auto& key : dropped) {
      LOG_WARN("config", "ignoring the stored dynamic config {} of broker resource \"{}\": not dynamic or invalid",
               key, resource);
    }
  }
  auto effective = dynamic_config_->effective_config();
  if (!effective.ok()) {
    // Validated before it was stored; a set that breaks the whole config
    // (after an upgrade, say) leaves the previous configuration in force.
    LOG_ERROR("config", "dynamic broker configs not applied: {}", effective.error().message());
    if (!effective_config_) effective_config_ = std::make_unique<BrokerConfig>(*config_);
  } else {
    effective_config_ = std::make_unique<BrokerConfig>(std::move(effective).value());
  }
  topic_configs_ = std::make_unique<TopicConfigs>(*effective_config_, dynamic_config_->effective_sources());
  if (logs_) logs_->cleaner().set_config(cleaner_config(effective_config_->values()));
}

}  // namespace samsa

#include "broker/topic_configs.h"

#include <algorithm>

#include "base/assert.h"
#include "config/dynamic_broker_config.h"

namespace samsa {
namespace {

struct TopicKey {
  const char* name;
  ConfigType type;
  const char* kafka_default;
  const char* broker_key;  // nullptr: no broker-level default
  ConfigValidator validator;
  const char* doc;
};

const std::vector<TopicKey>& topic_keys() {
  static const std::vector<TopicKey> keys = {
      {"cleanup.policy", ConfigType::kList, "delete", "log.cleanup.policy", ConfigValidator::in({"delete", "compact"}),
       "Retention policy for old segments: delete, compact, or both."},
      {"compression.type", ConfigType::kString, "producer", "compression.type",
       ConfigValidator::in({"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"}),
       "Final compression of the topic's batches; producer keeps the producer's codec."},
      {"delete.retention.ms", ConfigType::kLong, "86400000", "log.cleaner.delete.retention.ms",
       ConfigValidator::at_least(0), "How long tombstones are kept on compacted topics."},
      {"file.delete.delay.ms", ConfigType::kLong, "60000", "log.segment.delete.delay.ms", ConfigValidator::at_least(0),
       "Delay before deleting a file from the filesystem."},
      {"flush.messages", ConfigType::kLong, "9223372036854775807", "log.flush.interval.messages",
       ConfigValidator::at_least(1), "Messages accumulated before an fsync of the log."},
      {"flush.ms", ConfigType::kLong, "9223372036854775807", "log.flush.interval.ms", ConfigValidator::at_least(0),
       "Maximum time before an fsync of the log."},
      {"index.interval.bytes", ConfigType::kInt, "4096", "log.index.interval.bytes", ConfigValidator::at_least(0),
       "Bytes of log between offset index entries."},
      {"max.compaction.lag.ms", ConfigType::kLong, "9223372036854775807", "log.cleaner.max.compaction.lag.ms",
       ConfigValidator::at_least(1), "Maximum time a record stays uncompacted."},
      {"max.message.bytes", ConfigType::kInt, "1048588", "message.max.bytes", ConfigValidator::at_least(0),
       "Largest record batch size allowed."},
      // Deprecated in Kafka 3.0 and removed in 4.0, but accepted by every 3.x
      // broker: stored and described back, with no effect (Kafka 3.x always
      // assumes format 3.0, and Samsa down-converts for old fetch versions
      // regardless). Clients that read a topic's configs and write them all
      // back send these. docs/configuration.md, "Deprecated keys".
      {"message.downconversion.enable", ConfigType::kBoolean, "true", "log.message.downconversion.enable",
       ConfigValidator::none(), "Accepted and ignored (deprecated in Kafka 3.x, removed in 4.0)."},
      {"message.format.version", ConfigType::kString, "3.0-IV1", "log.message.format.version",
       ConfigValidator::none(), "Accepted and ignored (deprecated in Kafka 3.x, removed in 4.0): always 3.0."},
      {"message.timestamp.after.max.ms", ConfigType::kLong, "9223372036854775807",
       "log.message.timestamp.after.max.ms", ConfigValidator::at_least(0),
       "How far ahead of the broker's clock a CreateTime may be (INVALID_TIMESTAMP beyond)."},
      {"message.timestamp.before.max.ms", ConfigType::kLong, "9223372036854775807",
       "log.message.timestamp.before.max.ms", ConfigValidator::at_least(0),
       "How far behind the broker's clock a CreateTime may be (INVALID_TIMESTAMP beyond)."},
      {"message.timestamp.type", ConfigType::kString, "CreateTime", "log.message.timestamp.type",
       ConfigValidator::in({"CreateTime", "LogAppendTime"}), "Whether batches keep the producer's timestamps."},
      {"min.cleanable.dirty.ratio", ConfigType::kDouble, "0.5", "log.cleaner.min.cleanable.ratio",
       ConfigValidator::between(0, 1), "Dirty ratio that makes a log eligible for compaction."},
      {"min.compaction.lag.ms", ConfigType::kLong, "0", "log.cleaner.min.compaction.lag.ms",
       ConfigValidator::at_least(0), "Minimum time a record stays uncompacted."},
      {"min.insync.replicas", ConfigType::kInt, "1", "min.insync.replicas", ConfigValidator::at_least(1),
       "Replicas that must acknowledge an acks=all write."},
      {"preallocate", ConfigType::kBoolean, "false", "log.preallocate", ConfigValidator::none(),
       "Preallocate segment files."},
      {"retention.bytes", ConfigType::kLong, "-1", "log.retention.bytes", ConfigValidator::none(),
       "Maximum partition size before old segments are deleted; -1 unlimited."},
      {"retention.ms", ConfigType::kLong, "604800000", "log.retention.ms", ConfigValidator::at_least(-1),
       "Maximum age of a segment before deletion; -1 unlimited."},
      {"segment.bytes", ConfigType::kInt, "1073741824", "log.segment.bytes", ConfigValidator::at_least(14),
       "Segment file size."},
      {"segment.index.bytes", ConfigType::kInt, "10485760", "log.index.size.max.bytes", ConfigValidator::at_least(4),
       "Offset index size."},
      {"segment.jitter.ms", ConfigType::kLong, "0", "log.roll.jitter.ms", ConfigValidator::at_least(0),
       "Random jitter subtracted from segment.ms."},
      {"segment.ms", ConfigType::kLong, "604800000", "log.roll.ms", ConfigValidator::at_least(1),
       "Time after which a segment is rolled."},
      {"unclean.leader.election.enable", ConfigType::kBoolean, "false", "unclean.leader.election.enable",
       ConfigValidator::none(), "Allow out-of-sync replicas to become leader."},
  };
  return keys;
}

// The broker value of a topic key's synonym, as a string, when the broker
// config sets it (typed fields cover the ms/hours families).
std::optional<std::string> broker_value(const BrokerConfig& b, const std::string& key) {
  if (key == "retention.ms") return std::to_string(b.log_retention_ms);
  if (key == "segment.ms") return std::to_string(b.log_roll_ms);
  if (key == "flush.ms") {
    return b.log_flush_interval_ms ? std::optional(std::to_string(*b.log_flush_interval_ms)) : std::nullopt;
  }
  const char* synonym = broker_synonym(key);
  if (!synonym || !b.values().contains(synonym) || b.values().is_null(synonym)) return std::nullopt;
  return b.values().describe_value(synonym);
}

// Whether the broker sets a topic key's synonym by any of its names
// (log.retention.hours sets retention.ms too).
bool broker_sets(const BrokerConfig& b, const std::string& key) {
  const char* synonym = broker_synonym(key);
  if (!synonym) return false;
  for (const auto& name : broker_config_synonyms(synonym)) {
    if (b.values().contains(name) && !b.values().is_default(name)) return true;
  }
  return false;
}

// The layer that set a topic key's broker synonym.
ConfigSource broker_source(const std::map<std::string, ConfigSource>& sources, const std::string& key) {
  for (const auto& name : broker_config_synonyms(broker_synonym(key))) {
    if (auto it = sources.find(name); it != sources.end()) return it->second;
  }
  return ConfigSource::kStaticBroker;
}

}  // namespace

const ConfigDef& topic_config_definition() {
  static const ConfigDef def = [] {
    ConfigDef d;
    for (const TopicKey& k : topic_keys()) {
      d.define(ConfigKey{k.name, k.type, k.kafka_default, false, k.validator, ConfigImportance::kMedium, k.doc});
    }
    return d;
  }();
  return def;
}

const char* broker_synonym(const std::string& topic_key) {
  for (const TopicKey& k : topic_keys()) {
    if (topic_key == k.name) return k.broker_key;
  }
  return nullptr;
}

TopicConfigs::TopicConfigs(const BrokerConfig& broker, const std::map<std::string, ConfigSource>& sources) {
  // Layer by layer, lowest first, so each value keeps the source it came from.
  std::map<ConfigSource, std::map<std::string, std::string>> from_broker;
  for (const TopicKey& k : topic_keys()) {
    if (!broker_sets(broker, k.name)) continue;
    if (auto v = broker_value(broker, k.name)) from_broker[broker_source(sources, k.name)][k.name] = *v;
  }
  auto parsed = topic_config_definition().parse({}, ConfigSource::kDefault);
  for (ConfigSource layer :
       {ConfigSource::kStaticBroker, ConfigSource::kDynamicDefaultBroker, ConfigSource::kDynamicBroker}) {
    if (parsed.ok()) parsed = topic_config_definition().parse_over(*parsed, from_broker[layer], layer);
  }
  ASSERT_MSG(parsed.ok(), "broker defaults for topic configs must be valid");
  defaults_ = std::move(parsed).value();
}

ConfigValues TopicConfigs::values_for(const std::map<std::string, std::string>& overrides) const {
  auto parsed = topic_config_definition().parse_over(defaults_, overrides, ConfigSource::kDynamicTopic);
  ASSERT_MSG(parsed.ok(), "topic overrides are validated before they are stored");
  return std::move(parsed).value();
}

LogConfig TopicConfigs::log_config_for(const std::map<std::string, std::string>& overrides) const {
  return to_log_config(values_for(overrides));
}

Status TopicConfigs::validate(const std::map<std::string, std::string>& overrides) const {
  for (const auto& [key, value] : overrides) {
    if (!topic_config_definition().find(key)) {
      return Error(ErrorKind::kInvalidArgument, "Unknown topic config name: " + key);
    }
  }
  auto parsed = topic_config_definition().parse_over(defaults_, overrides, ConfigSource::kDynamicTopic);
  if (!parsed.ok()) return parsed.error();
  return ok_status();
}

LogConfig to_log_config(const ConfigValues& v) {
  LogConfig c;
  c.segment_bytes = v.get_int("segment.bytes");
  c.segment_ms = v.get_long("segment.ms");
  c.segment_jitter_ms = v.get_long("segment.jitter.ms");
  c.segment_index_bytes = v.get_int("segment.index.bytes");
  c.index_interval_bytes = v.get_int("index.interval.bytes");
  c.retention_ms = v.get_long("retention.ms");
  c.retention_bytes = v.get_long("retention.bytes");
  c.flush_messages = v.get_long("flush.messages");
  c.flush_ms = v.get_long("flush.ms");
  c.max_message_bytes = v.get_int("max.message.bytes");
  c.message_timestamp_type = v.get_string("message.timestamp.type") == "LogAppendTime" ? TimestampType::kLogAppendTime
                                                                                        : TimestampType::kCreateTime;
  c.message_timestamp_before_max_ms = v.get_long("message.timestamp.before.max.ms");
  c.message_timestamp_after_max_ms = v.get_long("message.timestamp.after.max.ms");
  const auto& policy = v.get_list("cleanup.policy");
  c.cleanup_policy.delete_segments = std::find(policy.begin(), policy.end(), "delete") != policy.end();
  c.cleanup_policy.compact = std::find(policy.begin(), policy.end(), "compact") != policy.end();
  const std::string& compression = v.get_string("compression.type");
  c.compression_type = compression == "uncompressed" ? TopicCompression::kUncompressed
                       : compression == "gzip"       ? TopicCompression::kGzip
                       : compression == "snappy"     ? TopicCompression::kSnappy
                       : compression == "lz4"        ? TopicCompression::kLz4
                       : compression == "zstd"       ? TopicCompression::kZstd
                                                     : TopicCompression::kProducer;
  c.preallocate = v.get_bool("preallocate");
  c.file_delete_delay_ms = v.get_long("file.delete.delay.ms");
  c.delete_retention_ms = v.get_long("delete.retention.ms");
  c.min_compaction_lag_ms = v.get_long("min.compaction.lag.ms");
  c.max_compaction_lag_ms = v.get_long("max.compaction.lag.ms");
  c.min_cleanable_dirty_ratio = v.get_double("min.cleanable.dirty.ratio");
  c.min_insync_replicas = v.get_int("min.insync.replicas");
  c.unclean_leader_election_enable = v.get_bool("unclean.leader.election.enable");
  return c;
}

}  // namespace samsa

// DynamicBrokerConfig against Kafka 3.9's DynamicBrokerConfig.scala and
// ConfigHelper.scala: precedence of the layers, synonym removal, the
// synonym lists DescribeConfigs shows, and validation messages.
#include "config/dynamic_broker_config.h"

#include <gtest/gtest.h>

namespace samsa {
namespace {

std::vector<std::string> names_of(const std::vector<ConfigLayerValue>& list) {
  std::vector<std::string> out;
  for (const auto& s : list) out.push_back(s.name + "@" + to_string(s.source));
  return out;
}

TEST(DynamicBrokerConfig, PerBrokerBeatsClusterDefaultBeatsStaticBeatsDefault) {
  DynamicBrokerConfig c(ConfigMap{{"message.max.bytes", "1000"}, {"log.segment.bytes", "2000000"}});
  c.set_dynamic({{"message.max.bytes", "2000"}, {"log.retention.bytes", "5"}}, false);
  c.set_dynamic({{"message.max.bytes", "3000"}}, true);
  auto effective = c.effective_config();
  ASSERT_TRUE(effective.ok()) << effective.error().to_string();
  EXPECT_EQ(effective->message_max_bytes, 3000);
  EXPECT_EQ(effective->log_retention_bytes, 5);
  EXPECT_EQ(effective->log_segment_bytes, 2000000);
  EXPECT_EQ(effective->num_partitions, 1);  // Kafka's default
  auto sources = c.effective_sources();
  EXPECT_EQ(sources["message.max.bytes"], ConfigSource::kDynamicBroker);
  EXPECT_EQ(sources["log.retention.bytes"], ConfigSource::kDynamicDefaultBroker);
  EXPECT_EQ(sources["log.segment.bytes"], ConfigSource::kStaticBroker);

  c.set_dynamic({}, true);  // deleting the per-broker layer uncovers the default
  EXPECT_EQ(c.effective_config()->message_max_bytes, 2000);
}

TEST(DynamicBrokerConfig, ADynamicSynonymRemovesTheStaticOnes) {
  // Kafka's overrideProps: a dynamic key removes its synonyms from the
  // layers below, so a static log.retention.minutes cannot outlive it.
  DynamicBrokerConfig c(ConfigMap{{"log.retention.minutes", "5"}, {"log.flush.scheduler.interval.ms", "100"}});
  EXPECT_EQ(c.effective_config()->log_retention_ms, 5 * 60'000);
  c.set_dynamic({{"log.retention.ms", "1000"}, {"log.flush.interval.ms", "50"}}, false);
  ConfigMap effective = c.effective_properties();
  EXPECT_EQ(effective.count("log.retention.minutes"), 0u);
  EXPECT_EQ(effective.count("log.flush.scheduler.interval.ms"), 0u);
  EXPECT_EQ(c.effective_config()->log_retention_ms, 1000);
  // log.retention.hours is not dynamic (only the primary name is): a stored
  // one is ignored, as Kafka's fromPersistentProps ignores it.
  EXPECT_EQ(c.set_dynamic({{"log.retention.hours", "2"}}, true), (std::vector<std::string>{"log.retention.hours"}));
  EXPECT_EQ(c.effective_config()->log_retention_ms, 1000);
}

TEST(DynamicBrokerConfig, SynonymsAreListedLayerByLayerFromTheNameItself) {
  DynamicBrokerConfig c(ConfigMap{{"log.retention.hours", "100"}});
  // Only the hours are set anywhere (log.retention.ms has no default): the
  // list for log.retention.ms would start with another name, so it is empty.
  EXPECT_TRUE(c.synonyms("log.retention.ms").empty());
  EXPECT_EQ(names_of(c.synonyms("log.retention.hours")),
            (std::vector<std::string>{"log.retention.hours@STATIC_BROKER_CONFIG",
                                      "log.retention.hours@DEFAULT_CONFIG"}));

  c.set_dynamic({{"log.retention.ms", "5000"}}, false);
  c.set_dynamic({{"log.retention.ms", "7000"}}, true);
  // Layer by layer: per-broker, cluster default, static, Kafka's default.
  auto list = c.synonyms("log.retention.ms");
  EXPECT_EQ(names_of(list), (std::vector<std::string>{"log.retention.ms@DYNAMIC_BROKER_CONFIG",
                                                      "log.retention.ms@DYNAMIC_DEFAULT_BROKER_CONFIG",
                                                      "log.retention.hours@STATIC_BROKER_CONFIG",
                                                      "log.retention.hours@DEFAULT_CONFIG"}));
  ASSERT_EQ(list.size(), 4u);
  EXPECT_EQ(list[0].value, "7000");
  EXPECT_EQ(list[1].value, "5000");
  EXPECT_EQ(list[3].value, "168");
  // Describing log.retention.hours: the entries above its own name go.
  EXPECT_EQ(names_of(c.synonyms("log.retention.hours")),
            (std::vector<std::string>{"log.retention.hours@STATIC_BROKER_CONFIG",
                                      "log.retention.hours@DEFAULT_CONFIG"}));

  DynamicBrokerConfig plain(ConfigMap{});
  EXPECT_EQ(names_of(plain.synonyms("message.max.bytes")),
            (std::vector<std::string>{"message.max.bytes@DEFAULT_CONFIG"}));
}

TEST(DynamicBrokerConfig, StaticOnlyKeysAreRefusedWithKafkasMessage) {
  DynamicBrokerConfig c(ConfigMap{});
  Status s = c.validate({{"node.id", "7"}, {"message.max.bytes", "10"}}, true);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(), "Cannot update these configs dynamically: Set(node.id)");
  s = c.validate({{"log.dirs", "/x"}, {"process.roles", "broker"}}, false);
  EXPECT_EQ(s.error().message(), "Cannot update these configs dynamically: Set(log.dirs, process.roles)");
  // Samsa cannot add or change listeners while running.
  EXPECT_FALSE(c.validate({{"listeners", "PLAINTEXT://127.0.0.1:9093"}}, true).ok());
  // The ms/hours families: only the primary name is dynamic in Kafka.
  EXPECT_FALSE(c.validate({{"log.retention.hours", "1"}}, false).ok());
  EXPECT_TRUE(c.validate({{"log.retention.ms", "1"}}, false).ok());
}

TEST(DynamicBrokerConfig, ValuesAreCheckedAndCustomKeysAccepted) {
  DynamicBrokerConfig c(ConfigMap{});
  Status s = c.validate({{"message.max.bytes", "big"}}, false);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(), "Invalid value big for configuration message.max.bytes: Not a number of type INT");
  EXPECT_FALSE(c.validate({{"log.cleanup.policy", "shred"}}, false).ok());
  EXPECT_FALSE(c.validate({{"leader.replication.throttled.rate", "-1"}}, false).ok());
  EXPECT_TRUE(c.validate({{"leader.replication.throttled.rate", "1000"}}, true).ok());
  EXPECT_TRUE(c.validate({{"my.plugin.setting", "anything"}}, false).ok());
  EXPECT_TRUE(c.validate({}, false).ok());
}

TEST(DynamicBrokerConfig, ThreadCountsMayOnlyDoubleOrHalve) {
  DynamicBrokerConfig c(ConfigMap{});  // num.io.threads defaults to 8
  EXPECT_TRUE(c.validate({{"num.io.threads", "16"}}, false).ok());
  Status s = c.validate({{"num.io.threads", "17"}}, false);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(),
            "Invalid value org.apache.kafka.common.config.ConfigException: Dynamic thread count update validation "
            "failed for num.io.threads=17, value should not be greater than double the current value 8 for "
            "configuration Invalid dynamic configuration");
  EXPECT_FALSE(c.validate({{"num.io.threads", "3"}}, false).ok());
  EXPECT_FALSE(c.validate({{"log.cleaner.threads", "3"}}, false).ok());
}

TEST(DynamicBrokerConfig, StoredSetsDropWhatCannotApply) {
  DynamicBrokerConfig c(ConfigMap{});
  std::vector<std::string> dropped =
      c.set_dynamic({{"node.id", "3"}, {"message.max.bytes", "x"}, {"log.retention.bytes", "9"}}, true);
  EXPECT_EQ(dropped, (std::vector<std::string>{"message.max.bytes", "node.id"}));
  EXPECT_EQ(c.dynamic_broker(), (ConfigMap{{"log.retention.bytes", "9"}}));
}

TEST(DynamicBrokerConfig, KeySets) {
  EXPECT_TRUE(is_dynamic_broker_key("log.retention.ms"));
  EXPECT_TRUE(is_dynamic_broker_key("message.max.bytes"));
  EXPECT_TRUE(is_dynamic_broker_key("num.io.threads"));
  // Quota keys exist only dynamically, outside Kafka's AllDynamicConfigs.
  EXPECT_FALSE(is_dynamic_broker_key("follower.replication.throttled.rate"));
  EXPECT_NE(find_broker_key("follower.replication.throttled.rate"), nullptr);
  EXPECT_FALSE(is_dynamic_broker_key("log.message.format.version"));  // Kafka: NonReconfigrableLogConfigs
  EXPECT_FALSE(is_dynamic_broker_key("log.dirs"));
  EXPECT_FALSE(is_dynamic_broker_key("log.retention.hours"));
  EXPECT_EQ(find_broker_key("nope"), nullptr);
  EXPECT_EQ(broker_config_synonyms("log.flush.interval.ms"),
            (std::vector<std::string>{"log.flush.interval.ms", "log.flush.scheduler.interval.ms"}));
  EXPECT_EQ(broker_config_synonyms("log.flush.scheduler.interval.ms"),
            (std::vector<std::string>{"log.flush.scheduler.interval.ms"}));
  // Every dynamic key Samsa names is one it defines.
  for (const char* key : {"log.roll.jitter.ms", "log.cleaner.backoff.ms", "max.connections.per.ip",
                          "producer.id.expiration.ms", "num.network.threads"}) {
    EXPECT_NE(find_broker_key(key), nullptr) << key;
  }
}

}  // namespace
}  // namespace samsa

#include "config/broker_config.h"

#include <gtest/gtest.h>

#include "base/test_files.h"
#include "config/properties.h"

namespace samsa {
namespace {

TEST(BrokerConfig, EmbeddedSingleNodeDefaults) {
  auto c = BrokerConfig::from_properties({});
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  EXPECT_EQ(c->node_id, NodeId(1));
  EXPECT_TRUE(c->is_broker());
  EXPECT_TRUE(c->is_controller());
  ASSERT_EQ(c->listeners.size(), 1u);
  EXPECT_EQ(c->listeners[0].endpoint.to_string(), "PLAINTEXT://127.0.0.1:9092");
  EXPECT_EQ(c->listeners[0].security_protocol, "PLAINTEXT");
  ASSERT_EQ(c->advertised_listeners.size(), 1u);
  EXPECT_EQ(c->advertised_listeners[0].endpoint.to_string(), "PLAINTEXT://127.0.0.1:9092");
  EXPECT_EQ(c->inter_broker_listener_name, "PLAINTEXT");
  EXPECT_EQ(c->log_dirs, (std::vector<std::string>{"./data"}));
  EXPECT_EQ(c->metadata_log_dir, "./data");
  EXPECT_EQ(c->num_partitions, 1);
  EXPECT_EQ(c->log_segment_bytes, 1073741824);
  EXPECT_EQ(c->log_retention_ms, 168LL * 3600 * 1000);
  EXPECT_EQ(c->log_roll_ms, 168LL * 3600 * 1000);
  EXPECT_EQ(c->log_retention_bytes, -1);
  EXPECT_EQ(c->log_flush_interval_ms, std::nullopt);
  EXPECT_EQ(c->message_max_bytes, 1048588);
  EXPECT_EQ(c->socket_request_max_bytes, 104857600);
  EXPECT_EQ(c->queued_max_requests, 500);
  EXPECT_EQ(c->offsets_topic_num_partitions, 50);
  EXPECT_EQ(c->offsets_retention_ms, 10080LL * 60 * 1000);
  EXPECT_EQ(c->group_initial_rebalance_delay_ms, 3000);
  EXPECT_EQ(c->compression_type, "producer");
  EXPECT_TRUE(c->values().is_default("num.partitions"));
  EXPECT_TRUE(c->unknown_keys().empty());
}

TEST(BrokerConfig, RetentionPrecedenceMsOverMinutesOverHours) {
  auto hours = BrokerConfig::from_properties({{"log.retention.hours", "1"}});
  ASSERT_TRUE(hours.ok());
  EXPECT_EQ(hours->log_retention_ms, 3'600'000);
  auto minutes = BrokerConfig::from_properties({{"log.retention.hours", "1"}, {"log.retention.minutes", "2"}});
  ASSERT_TRUE(minutes.ok());
  EXPECT_EQ(minutes->log_retention_ms, 120'000);
  auto ms = BrokerConfig::from_properties({{"log.retention.minutes", "2"}, {"log.retention.ms", "5"}});
  ASSERT_TRUE(ms.ok());
  EXPECT_EQ(ms->log_retention_ms, 5);
  auto forever = BrokerConfig::from_properties({{"log.retention.ms", "-1"}});
  ASSERT_TRUE(forever.ok());
  EXPECT_EQ(forever->log_retention_ms, -1);
  EXPECT_EQ(forever->values().source("log.retention.ms"), ConfigSource::kStaticBroker);
}

TEST(BrokerConfig, InvalidValueNamesKeyAndValue) {
  auto c = BrokerConfig::from_properties({{"num.partitions", "abc"}});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message(), "Invalid value abc for configuration num.partitions: Not a number of type INT");
}

TEST(BrokerConfig, BrokerLifecycleKeysWithKafkasDefaults) {
  auto defaults = BrokerConfig::from_properties({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->broker_heartbeat_interval_ms, 2000);
  EXPECT_EQ(defaults->broker_session_timeout_ms, 9000);
  auto set = BrokerConfig::from_properties({{"broker.heartbeat.interval.ms", "500"}, {"broker.session.timeout.ms", "3000"}});
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(set->broker_heartbeat_interval_ms, 500);
  EXPECT_EQ(set->broker_session_timeout_ms, 3000);
  auto zero = BrokerConfig::from_properties({{"broker.session.timeout.ms", "0"}});
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.error().message().find("broker.session.timeout.ms"), std::string::npos);
  auto text = BrokerConfig::from_properties({{"broker.heartbeat.interval.ms", "often"}});
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().message(),
            "Invalid value often for configuration broker.heartbeat.interval.ms: Not a number of type INT");
}

TEST(BrokerConfig, UnknownKeysAreCollected) {
  auto c = BrokerConfig::from_properties({{"zookeeper.connect", "localhost:2181"}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->unknown_keys(), (std::vector<std::string>{"zookeeper.connect"}));
}

TEST(BrokerConfig, ListenerRules) {
  auto two = BrokerConfig::from_properties(
      {{"listeners", "PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0"}, {"controller.listener.names", "CONTROLLER"}});
  ASSERT_TRUE(two.ok()) << two.error().to_string();
  ASSERT_EQ(two->advertised_listeners.size(), 1u);  // controller listener is not advertised
  EXPECT_EQ(two->advertised_listeners[0].endpoint.name, "PLAINTEXT");
  two->set_bound_port("PLAINTEXT", 40001);
  EXPECT_EQ(two->listeners[0].endpoint.port, 40001);
  EXPECT_EQ(two->advertised_listeners[0].endpoint.port, 40001);
  EXPECT_EQ(two->listeners[1].endpoint.port, 0);

  auto adv = BrokerConfig::from_properties(
      {{"listeners", "PLAINTEXT://:9092"}, {"advertised.listeners", "PLAINTEXT://broker1.example:9092"}});
  ASSERT_TRUE(adv.ok());
  EXPECT_EQ(adv->advertised_listeners[0].endpoint.host, "broker1.example");

  auto all = BrokerConfig::from_properties({{"listeners", "PLAINTEXT://0.0.0.0:9092"}});
  ASSERT_TRUE(all.ok());
  EXPECT_NE(all->advertised_listeners[0].endpoint.host, "0.0.0.0");

  auto expect_bad = [](std::map<std::string, std::string> props, std::string fragment) {
    auto c = BrokerConfig::from_properties(props);
    ASSERT_FALSE(c.ok()) << fragment;
    EXPECT_NE(c.error().message().find(fragment), std::string::npos) << c.error().message();
  };
  expect_bad({{"listeners", "127.0.0.1:9092"}}, "Invalid value 127.0.0.1:9092 for configuration listeners");
  expect_bad({{"listeners", "PLAINTEXT://a:1,PLAINTEXT://b:2"}}, "different name");
  expect_bad({{"listeners", "PLAINTEXT://a:1,OTHER://b:1"}, {"listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,OTHER:PLAINTEXT"}},
             "different port");
  expect_bad({{"listeners", "WEIRD://a:1"}}, "no security protocol");
  expect_bad({{"listeners", "SSL://a:1"}}, "does not support yet");
  expect_bad({{"advertised.listeners", "PLAINTEXT://0.0.0.0:9092"}}, "nonroutable");
  expect_bad({{"controller.listener.names", "CONTROLLER"}}, "must only contain values appearing in the 'listeners'");
  expect_bad({{"process.roles", "broker,zookeeper"}}, "String must be one of: broker, controller");
  expect_bad({{"node.id", "2"}, {"broker.id", "3"}}, "differ");
  expect_bad({{"controller.quorum.voters", "1@localhost"}}, "controller.quorum.voters");
}

TEST(BrokerConfig, BrokerIdIsAnAliasOfNodeId) {
  auto c = BrokerConfig::from_properties({{"broker.id", "7"}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->node_id, NodeId(7));
}

TEST(BrokerConfig, ShippedSampleConfigIsValidAndMatchesDefaults) {
  auto props = load_properties_file("config/server.properties");
  ASSERT_TRUE(props.ok());
  auto c = BrokerConfig::from_properties(*props);
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  EXPECT_TRUE(c->unknown_keys().empty());
  EXPECT_EQ(c->node_id, NodeId(1));
  EXPECT_EQ(c->log_dirs, (std::vector<std::string>{"./data"}));
}

// The samples in config/: a combined node, a controller and a broker, each
// valid under Kafka's role rules, with no unknown key.
TEST(BrokerConfig, EverySampleConfigIsValid) {
  struct Sample {
    const char* path;
    bool broker, controller;
    int32_t node;
  };
  for (const Sample& sample : {Sample{"config/server.properties", true, true, 1},
                               Sample{"config/combined.properties", true, true, 1},
                               Sample{"config/controller.properties", false, true, 1},
                               Sample{"config/broker.properties", true, false, 4}}) {
    SCOPED_TRACE(sample.path);
    auto props = load_properties_file(sample.path);
    ASSERT_TRUE(props.ok()) << props.error().to_string();
    auto c = BrokerConfig::from_properties(*props);
    ASSERT_TRUE(c.ok()) << c.error().to_string();
    EXPECT_TRUE(c->unknown_keys().empty());
    EXPECT_EQ(c->is_broker(), sample.broker);
    EXPECT_EQ(c->is_controller(), sample.controller);
    EXPECT_EQ(c->node_id, NodeId(sample.node));
  }
  auto broker = BrokerConfig::from_properties(*load_properties_file("config/broker.properties"));
  ASSERT_TRUE(broker.ok());
  EXPECT_EQ(broker->broker_rack, "rack-a");
  EXPECT_EQ(broker->controller_quorum_voters.size(), 3u);
  EXPECT_EQ(broker->offsets_topic_replication_factor, 3);
}

TEST(BrokerConfig, EveryKeyIsDocumented) {
  std::string doc;
  ASSERT_TRUE(testing::read_repo_file("docs/configuration.md", &doc));
  for (const auto& key : BrokerConfig::definition().keys()) {
    EXPECT_NE(doc.find("| `" + key.name + "` |"), std::string::npos) << key.name << " missing from the key tables";
  }
}

}  // namespace
}  // namespace samsa

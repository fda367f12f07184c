// Kafka's KRaft role, listener and quorum rules (KafkaConfig.validateValues,
// Kafka 4.x) with Kafka's messages, and Samsa's one exception: a combined
// node with no quorum keys is a one-node cluster (is_implicit_single_node).

#include "config/kraft_rules.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace samsa {
namespace {

using Props = std::map<std::string, std::string>;

// A combined node of a three-voter quorum, valid as Kafka's docs write it.
Props combined() {
  return {{"process.roles", "broker,controller"},
          {"node.id", "1"},
          {"controller.quorum.voters", "1@localhost:9093,2@localhost:9095,3@localhost:9097"},
          {"listeners", "PLAINTEXT://localhost:9092,CONTROLLER://localhost:9093"},
          {"controller.listener.names", "CONTROLLER"}};
}

Props broker_only() {
  return {{"process.roles", "broker"},
          {"node.id", "4"},
          {"controller.quorum.voters", "1@localhost:9093"},
          {"listeners", "PLAINTEXT://localhost:9092"},
          {"controller.listener.names", "CONTROLLER"}};
}

Props controller_only() {
  return {{"process.roles", "controller"},
          {"node.id", "1"},
          {"controller.quorum.voters", "1@localhost:9093"},
          {"listeners", "CONTROLLER://localhost:9093"},
          {"controller.listener.names", "CONTROLLER"}};
}

Props with(Props p, const Props& changes) {
  for (const auto& [k, v] : changes) {
    if (v == "<unset>") {
      p.erase(k);
    } else {
      p[k] = v;
    }
  }
  return p;
}

std::string refusal(const Props& p) {
  auto c = BrokerConfig::from_properties(p);
  return c.ok() ? "" : c.error().message();
}

TEST(KraftRules, ValidRolesParse) {
  for (const Props& p : {combined(), broker_only(), controller_only(), Props{}}) {
    EXPECT_EQ(refusal(p), "");
  }
  auto c = BrokerConfig::from_properties(with(broker_only(), {{"broker.rack", "rack-a"}}));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->broker_rack, "rack-a");
  EXPECT_FALSE(c->is_controller());
  EXPECT_FALSE(c->is_implicit_single_node());
  EXPECT_TRUE(BrokerConfig::from_properties({})->is_implicit_single_node());
}

TEST(KraftRules, ControllerListenersAreAdvertisedApartFromTheBrokers) {
  auto c = BrokerConfig::from_properties(
      with(combined(), {{"listeners", "PLAINTEXT://0.0.0.0:9092,CONTROLLER://0.0.0.0:9093"}}));
  ASSERT_TRUE(c.ok()) << c.error().message();
  ASSERT_EQ(c->advertised_listeners.size(), 1u);
  EXPECT_EQ(c->advertised_listeners[0].endpoint.name, "PLAINTEXT");
  ASSERT_EQ(c->advertised_controller_listeners.size(), 1u);
  EXPECT_EQ(c->advertised_controller_listeners[0].endpoint.name, "CONTROLLER");
  EXPECT_EQ(c->advertised_controller_listeners[0].endpoint.host, "");  // 0.0.0.0: Kafka drops the host
  // Kafka 4 (KIP-853): advertised.listeners may advertise the controller.
  c = BrokerConfig::from_properties(
      with(combined(), {{"advertised.listeners", "PLAINTEXT://b1.example:9092,CONTROLLER://c1.example:9093"}}));
  ASSERT_TRUE(c.ok()) << c.error().message();
  ASSERT_EQ(c->advertised_listeners.size(), 1u);
  EXPECT_EQ(c->advertised_listeners[0].endpoint.host, "b1.example");
  ASSERT_EQ(c->advertised_controller_listeners.size(), 1u);
  EXPECT_EQ(c->advertised_controller_listeners[0].endpoint.host, "c1.example");
  EXPECT_EQ(c->inter_broker_listener_name, "PLAINTEXT");
}

TEST(KraftRules, QuorumKeysParse) {
  auto c = BrokerConfig::from_properties(
      with(combined(), {{"controller.quorum.voters", ""},
                        {"controller.quorum.bootstrap.servers", "localhost:9093,[::1]:9094"}}));
  ASSERT_TRUE(c.ok()) << c.error().message();
  ASSERT_EQ(c->controller_quorum_bootstrap_servers.size(), 2u);
  EXPECT_EQ(c->controller_quorum_bootstrap_servers[1].host, "::1");
  EXPECT_EQ(c->controller_quorum_bootstrap_servers[1].port, 9094);
  EXPECT_NE(refusal(with(combined(), {{"controller.quorum.bootstrap.servers", "localhost"}}))
                .find("Invalid value localhost for configuration controller.quorum.bootstrap.servers: expected "
                      "host:port"),
            std::string::npos);
}

TEST(KraftRules, KafkasMessages) {
  const std::string no_quorum =
      "If using process.roles, either controller.quorum.bootstrap.servers must contain the set of bootstrap "
      "controllers or controller.quorum.voters must contain a parseable set of controllers.";
  EXPECT_EQ(refusal(with(broker_only(), {{"controller.quorum.voters", ""}})), no_quorum);
  EXPECT_EQ(refusal(with(controller_only(), {{"controller.quorum.voters", ""}})), no_quorum);

  EXPECT_EQ(refusal(with(combined(), {{"node.id", "4"}})),
            "If process.roles contains the 'controller' role, the node id 4 must be included in the set of voters "
            "controller.quorum.voters=Set(1, 2, 3)");
  EXPECT_EQ(refusal(with(controller_only(), {{"node.id", "2"}})),
            "If process.roles contains the 'controller' role, the node id 2 must be included in the set of voters "
            "controller.quorum.voters=Set(1)");
  EXPECT_EQ(refusal(with(broker_only(), {{"node.id", "1"}})),
            "If process.roles contains just the 'broker' role, the node id 1 must not be included in the set of "
            "voters controller.quorum.voters=Set(1)");

  const std::string no_controller_listener =
      "controller.listener.names must contain at least one value appearing in the 'listeners' configuration when "
      "running the KRaft controller role";
  EXPECT_EQ(refusal(with(combined(), {{"controller.listener.names", "<unset>"}})), no_controller_listener);
  EXPECT_EQ(refusal(with(combined(), {{"controller.listener.names", "CONTROLLER,OTHER"}})),
            "controller.listener.names must only contain values appearing in the 'listeners' configuration when "
            "running the KRaft controller role");
  // The implicit single node needs no controller listener, but one it names must exist.
  EXPECT_EQ(refusal({{"controller.listener.names", "CONTROLLER"}}),
            "controller.listener.names must only contain values appearing in the 'listeners' configuration when "
            "running the KRaft controller role");

  EXPECT_EQ(refusal(with(broker_only(), {{"controller.listener.names", "<unset>"}})),
            "controller.listener.names must contain at least one value when running KRaft with just the broker role");
  EXPECT_EQ(refusal(with(broker_only(), {{"listeners", "PLAINTEXT://localhost:9092,CONTROLLER://localhost:9093"}})),
            "controller.listener.names must not contain a value appearing in the 'listeners' configuration when "
            "running KRaft with just the broker role");
  EXPECT_EQ(refusal(with(broker_only(), {{"controller.listener.names", "CTRL"}})),
            "Controller listener with name CTRL defined in controller.listener.names not found in "
            "listener.security.protocol.map  (an explicit security mapping for each controller listener is required "
            "if listener.security.protocol.map is non-empty, or if there are security protocols other than PLAINTEXT "
            "in use)");

  EXPECT_EQ(refusal(with(controller_only(), {{"listeners", "CONTROLLER://localhost:9093,PLAINTEXT://localhost:9092"}})),
            "The listeners config must only contain KRaft controller listeners from controller.listener.names when "
            "process.roles=controller");
  EXPECT_EQ(refusal(with(controller_only(), {{"inter.broker.listener.name", "CONTROLLER"}})),
            "controller.listener.names must not contain an explicitly set inter.broker.listener.name configuration "
            "value when process.roles=controller'");

  EXPECT_EQ(refusal(with(combined(), {{"listeners", "CONTROLLER://localhost:9093"}})),
            "There must be at least one broker advertised listener. Perhaps all listeners appear in "
            "controller.listener.names?");
  EXPECT_EQ(refusal(with(combined(), {{"inter.broker.listener.name", "CONTROLLER"}})),
            "inter.broker.listener.name must be a listener name defined in advertised.listeners. The valid options "
            "based on currently configured listeners are PLAINTEXT");
  EXPECT_EQ(refusal(with(combined(), {{"advertised.listeners", "PLAINTEXT://a:9092,INTERNAL://a:9094"},
                                      {"listener.security.protocol.map",
                                       "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT"}})),
            "advertised.listeners listener names must be equal to or a subset of the ones defined in listeners. "
            "Found INTERNAL,PLAINTEXT. The valid options based on the current configuration are CONTROLLER,PLAINTEXT");
  EXPECT_EQ(refusal(with(combined(), {{"advertised.listeners", "CONTROLLER://0.0.0.0:9093"}})),
            "advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a routable IP address.");
}

TEST(KraftRules, SingleNodeDefaultsAreTheQuickstarts) {
  auto defaults = BrokerConfig::from_properties({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->offsets_topic_replication_factor, 3);  // Kafka's default
  auto quickstart = BrokerConfig::from_properties(BrokerConfig::single_node_defaults());
  ASSERT_TRUE(quickstart.ok());
  EXPECT_EQ(quickstart->offsets_topic_replication_factor, 1);
  EXPECT_EQ(quickstart->values().get_int("transaction.state.log.replication.factor"), 1);
  EXPECT_EQ(quickstart->values().get_int("transaction.state.log.min.isr"), 1);
}

}  // namespace
}  // namespace samsa

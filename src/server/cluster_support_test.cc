// The startup refusal of configurations Samsa cannot run yet (a dynamic
// quorum), and that single-node, combined and split-role configurations
// pass.

#include "server/cluster_support.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "config/properties.h"
#include "server/run_server.h"

namespace samsa {
namespace {

BrokerConfig parsed(const std::map<std::string, std::string>& props) {
  auto c = BrokerConfig::from_properties(props);
  EXPECT_TRUE(c.ok()) << c.error().to_string();
  return c.ok() ? std::move(c).value() : BrokerConfig{};
}

// The refusal's message, or "" when the configuration is accepted.
std::string refusal(const std::map<std::string, std::string>& props) {
  Status s = check_supported_cluster(parsed(props));
  return s.ok() ? "" : s.error().message();
}

// props plus a controller listener, as Kafka requires of a controller
// that names a quorum.
std::map<std::string, std::string> with_controller_listener(std::map<std::string, std::string> props) {
  props.emplace("listeners", "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093");
  props.emplace("controller.listener.names", "CONTROLLER");
  return props;
}

TEST(ClusterSupport, SingleNodeConfigurationsStart) {
  EXPECT_EQ(refusal({}), "");
  EXPECT_EQ(refusal({{"process.roles", "broker,controller"}, {"node.id", "1"}}), "");
  EXPECT_EQ(refusal({{"process.roles", "controller,broker"}}), "");
  // Kafka's KRaft sample of one combined node: it is its own only voter.
  EXPECT_EQ(refusal({{"node.id", "1"},
                     {"controller.quorum.voters", "1@localhost:9093"},
                     {"listeners", "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093"},
                     {"controller.listener.names", "CONTROLLER"}}),
            "");
  EXPECT_EQ(refusal(with_controller_listener({{"node.id", "7"}, {"controller.quorum.voters", "7@a:1,7@b:2"}})), "");
}

TEST(ClusterSupport, TheSampleServerPropertiesStarts) {
  auto props = load_properties_file("config/server.properties");
  ASSERT_TRUE(props.ok()) << props.error().to_string() << " (tests run from the repository root)";
  EXPECT_EQ(refusal(*props), "");
}

// Every sample of config/ runs: the combined node and the halves of a
// split cluster (config/split/ holds a whole one).
TEST(ClusterSupport, TheRoleSamplesStart) {
  for (const char* sample : {"config/combined.properties", "config/controller.properties", "config/broker.properties",
                             "config/split/controller-1.properties", "config/split/broker-4.properties"}) {
    SCOPED_TRACE(sample);
    auto props = load_properties_file(sample);
    ASSERT_TRUE(props.ok()) << props.error().to_string();
    EXPECT_EQ(refusal(*props), "");
  }
}

TEST(ClusterSupport, ACombinedNodeOfAQuorumStarts) {
  EXPECT_EQ(refusal(with_controller_listener(
                {{"node.id", "1"}, {"controller.quorum.voters", "1@h1:9093,2@h2:9093,3@h3:9093"}})),
            "");
  // A controller outside the quorum is refused by the config itself (Kafka's rule).
  auto outside = BrokerConfig::from_properties(
      with_controller_listener({{"node.id", "4"}, {"controller.quorum.voters", "1@h1:9093"}}));
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.error().message().find("the node id 4 must be included in the set of voters"), std::string::npos);
}

TEST(ClusterSupport, ADynamicQuorumIsRefused) {
  std::string why = refusal(with_controller_listener({{"controller.quorum.bootstrap.servers", "127.0.0.1:9093"}}));
  EXPECT_NE(why.find("controller.quorum.bootstrap.servers is set and controller.quorum.voters is not: a dynamic "
                     "quorum (KIP-853) is not supported yet"),
            std::string::npos)
      << why;
  // With static voters naming only this node, the bootstrap servers are not needed to find it.
  EXPECT_EQ(refusal(with_controller_listener({{"controller.quorum.bootstrap.servers", "127.0.0.1:9093"},
                                              {"controller.quorum.voters", "1@127.0.0.1:9093"}})),
            "");
}

TEST(ClusterSupport, ASingleRoleStarts) {
  EXPECT_EQ(refusal({{"process.roles", "broker"},
                     {"node.id", "2"},
                     {"controller.quorum.voters", "1@h1:9093"},
                     {"controller.listener.names", "CONTROLLER"}}),
            "");
  EXPECT_EQ(refusal({{"process.roles", "controller"},
                     {"controller.quorum.voters", "1@h1:9093,2@h2:9093"},
                     {"listeners", "CONTROLLER://127.0.0.1:9093"},
                     {"controller.listener.names", "CONTROLLER"}}),
            "");
  // A broker-only node that finds the quorum through bootstrap servers only: dynamic.
  std::string why = refusal({{"process.roles", "broker"},
                             {"node.id", "2"},
                             {"controller.quorum.bootstrap.servers", "h1:9093"},
                             {"controller.listener.names", "CONTROLLER"}});
  EXPECT_NE(why.find("a dynamic quorum (KIP-853) is not supported yet"), std::string::npos) << why;
}

TEST(ClusterSupport, VoterIdsAreIntegers) {
  for (const char* bad : {"x@h:1", "@h:1", "1x@h:1", "-1@h:1", "1@h"}) {
    SCOPED_TRACE(bad);
    auto c = BrokerConfig::from_properties({{"controller.quorum.voters", bad}});
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.error().message().find("Invalid value " + std::string(bad) +
                                       " for configuration controller.quorum.voters: expected id@host:port"),
              std::string::npos)
        << c.error().message();
  }
  BrokerConfig c =
      parsed(with_controller_listener({{"node.id", "12"}, {"controller.quorum.voters", "12@example.com:9093"}}));
  ASSERT_EQ(c.controller_quorum_voters.size(), 1u);
  EXPECT_EQ(c.controller_quorum_voters[0].id, NodeId(12));
  EXPECT_EQ(c.controller_quorum_voters[0].host, "example.com");
  EXPECT_EQ(c.controller_quorum_voters[0].port, 9093);
}

// The refusal is wired into `samsa server`: exit code 1 and the message,
// before any listener is bound or service looked for.
TEST(ClusterSupport, RunServerRefusesBeforeStarting) {
  set_service_factory(nullptr);
  std::vector<std::string> args = {"server", "--override", "process.roles=broker", "--override",
                                   "node.id=2", "--override", "controller.listener.names=CONTROLLER", "--override",
                                   "controller.quorum.bootstrap.servers=localhost:9093"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStderr();
  int rc = run_server(int(argv.size()), argv.data());
  std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 1);
  EXPECT_NE(log.find("a dynamic quorum (KIP-853) is not supported yet"), std::string::npos) << log;
  EXPECT_EQ(log.find("no broker service"), std::string::npos) << log;
  EXPECT_EQ(log.find("listening on"), std::string::npos) << log;
}

}  // namespace
}  // namespace samsa

#include "cli/dev_cluster_config.h"

#include <gtest/gtest.h>

#include "base/test_files.h"

namespace samsa::cli {
namespace {

DevClusterLayout three_from_9092() { return plan_dev_cluster("./data/cluster", ports_from_base(3, 9092)); }

TEST(DevClusterConfig, TheSampleConfigsAreWhatTheCommandWrites) {
  DevClusterLayout layout = three_from_9092();
  for (const DevNode& node : layout.nodes) {
    std::string sample;
    std::string path = "config/cluster/node-" + std::to_string(node.id) + ".properties";
    ASSERT_TRUE(samsa::testing::read_repo_file(path, &sample));
    EXPECT_EQ(render_node_config(layout, node), sample) << path << " differs from `samsa dev cluster --base-port "
                                                        << "9092 --configs-only` (regenerate it)";
  }
}

TEST(DevClusterConfig, EveryNodeVotesAndListensOnItsOwnPorts) {
  DevClusterLayout layout = three_from_9092();
  ASSERT_EQ(layout.nodes.size(), 3u);
  const DevNode& second = layout.nodes[1];
  EXPECT_EQ(second.id, 2);
  EXPECT_EQ(second.data_dir, "./data/cluster/node-2");
  EXPECT_EQ(second.config_path, "./data/cluster/node-2.properties");
  EXPECT_EQ(second.log_path, "./data/cluster/node-2.log");
  std::string config = render_node_config(layout, second);
  EXPECT_NE(config.find("\nnode.id=2\n"), std::string::npos);
  EXPECT_NE(config.find("\ncontroller.quorum.voters=1@127.0.0.1:9093,2@127.0.0.1:9095,3@127.0.0.1:9097\n"),
            std::string::npos);
  EXPECT_NE(config.find("\nlisteners=PLAINTEXT://127.0.0.1:9094,CONTROLLER://127.0.0.1:9095\n"), std::string::npos);
  EXPECT_EQ(dev_bootstrap_servers(layout), "127.0.0.1:9092,127.0.0.1:9094,127.0.0.1:9096");
}

TEST(DevClusterConfig, InternalTopicsNeverAskForMoreReplicasThanNodes) {
  DevClusterLayout one = plan_dev_cluster("d", {{10000, 10001}});
  std::string config = render_node_config(one, one.nodes[0]);
  EXPECT_NE(config.find("\noffsets.topic.replication.factor=1\n"), std::string::npos);
  EXPECT_NE(config.find("\ntransaction.state.log.min.isr=1\n"), std::string::npos);
  EXPECT_NE(config.find("\ncontroller.quorum.voters=1@127.0.0.1:10001\n"), std::string::npos);
}

// --controllers 3 --brokers 2: nodes 1-3 controller-only voters on their
// controller ports, 4-5 broker-only on their broker ports, observing them.
TEST(DevClusterConfig, ASplitClusterHasControllerOnlyVotersAndBrokerOnlyNodes) {
  DevClusterLayout layout = plan_dev_cluster("d", ports_from_base(5, 9092), 3);
  ASSERT_EQ(layout.nodes.size(), 5u);
  const std::string voters = "\ncontroller.quorum.voters=1@127.0.0.1:9093,2@127.0.0.1:9095,3@127.0.0.1:9097\n";
  std::string controller = render_node_config(layout, layout.nodes[0]);
  EXPECT_NE(controller.find("\nprocess.roles=controller\n"), std::string::npos) << controller;
  EXPECT_NE(controller.find(voters), std::string::npos) << controller;
  EXPECT_NE(controller.find("\nlisteners=CONTROLLER://127.0.0.1:9093\n"), std::string::npos) << controller;
  EXPECT_EQ(controller.find("PLAINTEXT://"), std::string::npos) << controller;
  std::string broker = render_node_config(layout, layout.nodes[4]);
  EXPECT_NE(broker.find("\nprocess.roles=broker\n"), std::string::npos) << broker;
  EXPECT_NE(broker.find(voters), std::string::npos) << broker;
  EXPECT_NE(broker.find("\nlisteners=PLAINTEXT://127.0.0.1:9100\n"), std::string::npos) << broker;
  EXPECT_EQ(broker.find("CONTROLLER://"), std::string::npos) << broker;
  // Two brokers: the internal topics ask for two replicas.
  EXPECT_NE(broker.find("\noffsets.topic.replication.factor=2\n"), std::string::npos) << broker;
  EXPECT_EQ(dev_bootstrap_servers(layout), "127.0.0.1:9098,127.0.0.1:9100");
}

}  // namespace
}  // namespace samsa::cli

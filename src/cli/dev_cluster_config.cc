#include "cli/dev_cluster_config.h"

#include <algorithm>

#include "base/assert.h"

namespace samsa::cli {
namespace {

std::string address(uint16_t port) { return std::string(kDevClusterHost) + ":" + std::to_string(port); }

std::string voters(const DevClusterLayout& layout) {
  std::string out;
  for (const DevNode& n : layout.nodes) {
    if (!out.empty()) out += ',';
    out += std::to_string(n.id) + "@" + address(n.controller_port);
  }
  return out;
}

}  // namespace

DevClusterLayout plan_dev_cluster(const std::string& root, const std::vector<std::pair<uint16_t, uint16_t>>& ports) {
  DevClusterLayout layout{root, {}};
  for (size_t k = 0; k < ports.size(); ++k) {
    DevNode node;
    node.id = int32_t(k + 1);
    node.broker_port = ports[k].first;
    node.controller_port = ports[k].second;
    std::string stem = root + "/node-" + std::to_string(node.id);
    node.data_dir = stem;
    node.config_path = stem + ".properties";
    node.log_path = stem + ".log";
    layout.nodes.push_back(std::move(node));
  }
  return layout;
}

std::vector<std::pair<uint16_t, uint16_t>> ports_from_base(int nodes, uint16_t base_port) {
  std::vector<std::pair<uint16_t, uint16_t>> out;
  for (int k = 0; k < nodes; ++k) {
    int broker = int(base_port) + 2 * k;
    ASSERT(broker + 1 <= 65535);  // checked by the command line's range
    out.emplace_back(uint16_t(broker), uint16_t(broker + 1));
  }
  return out;
}

std::string render_node_config(const DevClusterLayout& layout, const DevNode& node) {
  int n = int(layout.nodes.size());
  std::string id = std::to_string(node.id);
  std::string out;
  out += "# Samsa: node " + id + " of a local cluster of " + std::to_string(n) +
         " combined nodes (broker and controller in\n"
         "# one process), as `samsa dev cluster` writes it. Each node is formatted\n"
         "# with the cluster's one id before its first start:\n"
         "#\n"
         "#   samsa storage format --cluster-id ID --config node-" + id + ".properties --ignore-formatted\n"
         "#   samsa server --config node-" + id + ".properties\n"
         "#\n"
         "# docs/configuration.md lists every key.\n\n";
  out += "process.roles=broker,controller\n";
  out += "node.id=" + id + "\n\n";
  out += "# The quorum: every node of the cluster votes.\n";
  out += "controller.quorum.voters=" + voters(layout) + "\n\n";
  out += "# Clients connect to PLAINTEXT; the quorum talks on CONTROLLER.\n";
  out += "listeners=PLAINTEXT://" + address(node.broker_port) + ",CONTROLLER://" + address(node.controller_port) + "\n";
  out += "controller.listener.names=CONTROLLER\n";
  out += "inter.broker.listener.name=PLAINTEXT\n";
  out += "advertised.listeners=PLAINTEXT://" + address(node.broker_port) + ",CONTROLLER://" +
         address(node.controller_port) + "\n";
  out += "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT\n\n";
  out += "log.dirs=" + node.data_dir + "\n\n";
  out += "# The internal topics: Kafka's defaults (3, 3, 2), or as many replicas as\n"
         "# there are nodes.\n";
  out += "offsets.topic.replication.factor=" + std::to_string(std::min(3, n)) + "\n";
  out += "transaction.state.log.replication.factor=" + std::to_string(std::min(3, n)) + "\n";
  out += "transaction.state.log.min.isr=" + std::to_string(std::min(2, n)) + "\n";
  return out;
}

std::string dev_bootstrap_servers(const DevClusterLayout& layout) {
  std::string out;
  for (const DevNode& n : layout.nodes) {
    if (!out.empty()) out += ',';
    out += address(n.broker_port);
  }
  return out;
}

}  // namespace samsa::cli

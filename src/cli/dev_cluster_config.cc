#include "cli/dev_cluster_config.h"

#include <algorithm>

#include "base/assert.h"

namespace samsa::cli {
namespace {

std::string address(uint16_t port) { return std::string(kDevClusterHost) + ":" + std::to_string(port); }

std::string voters(const DevClusterLayout& layout) {
  std::string out;
  for (const DevNode& n : layout.nodes) {
    if (!n.is_controller()) continue;
    if (!out.empty()) out += ',';
    out += std::to_string(n.id) + "@" + address(n.controller_port);
  }
  return out;
}

int broker_count(const DevClusterLayout& layout) {
  return int(std::count_if(layout.nodes.begin(), layout.nodes.end(), [](const DevNode& n) { return n.is_broker(); }));
}

// The header and the role keys of a split node (a combined node keeps the
// text of config/cluster/).
std::string split_node_head(const DevClusterLayout& layout, const DevNode& node) {
  std::string id = std::to_string(node.id);
  int brokers = broker_count(layout);
  int controllers = int(layout.nodes.size()) - brokers;
  bool controller = node.role == DevRole::kController;
  std::string out;
  out += "# Samsa: node " + id + " (" + (controller ? "controller-only" : "broker-only") +
         ") of a local split cluster of " + std::to_string(controllers) + " controllers and " +
         std::to_string(brokers) + " brokers,\n"
         "# as `samsa dev cluster --controllers N` writes it. Each node is formatted\n"
         "# with the cluster's one id before its first start:\n"
         "#\n"
         "#   samsa storage format --cluster-id ID --config node-" + id + ".properties --ignore-formatted\n"
         "#   samsa server --config node-" + id + ".properties\n"
         "#\n"
         "# docs/configuration.md lists every key; docs/cluster.md, split roles.\n\n";
  out += std::string("process.roles=") + (controller ? "controller" : "broker") + "\n";
  out += "node.id=" + id + "\n\n";
  out += controller ? "# The quorum: the controllers vote.\n"
                    : "# The quorum: the controllers vote; a broker observes it.\n";
  out += "controller.quorum.voters=" + voters(layout) + "\n";
  out += "controller.listener.names=CONTROLLER\n\n";
  if (controller) {
    out += "# A controller binds its controller listener only: clients reach brokers.\n";
    out += "listeners=CONTROLLER://" + address(node.controller_port) + "\n";
    out += "listener.security.protocol.map=CONTROLLER:PLAINTEXT\n\n";
  } else {
    out += "listeners=PLAINTEXT://" + address(node.broker_port) + "\n";
    out += "inter.broker.listener.name=PLAINTEXT\n";
    out += "advertised.listeners=PLAINTEXT://" + address(node.broker_port) + "\n";
    out += "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT\n\n";
  }
  return out;
}

// The header and the role keys of a combined node (the text of
// config/cluster/node-K.properties).
std::string combined_node_head(const DevClusterLayout& layout, const DevNode& node) {
  std::string id = std::to_string(node.id);
  std::string out;
  out += "# Samsa: node " + id + " of a local cluster of " + std::to_string(layout.nodes.size()) +
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
  return out;
}

}  // namespace

DevClusterLayout plan_dev_cluster(const std::string& root, const std::vector<std::pair<uint16_t, uint16_t>>& ports,
                                  int controllers) {
  ASSERT(controllers >= 0 && (controllers == 0 || size_t(controllers) < ports.size()));  // a broker at least
  DevClusterLayout layout{root, {}};
  for (size_t k = 0; k < ports.size(); ++k) {
    DevNode node;
    node.id = int32_t(k + 1);
    if (controllers > 0) node.role = int(k) < controllers ? DevRole::kController : DevRole::kBroker;
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
  int n = broker_count(layout);
  std::string out = node.role == DevRole::kCombined ? combined_node_head(layout, node) : split_node_head(layout, node);
  out += "log.dirs=" + node.data_dir + "\n\n";
  out += std::string("# The internal topics: Kafka's defaults (3, 3, 2), or as many replicas as\n"
                     "# there are ") + (node.role == DevRole::kCombined ? "nodes" : "brokers") + ".\n";
  out += "offsets.topic.replication.factor=" + std::to_string(std::min(3, n)) + "\n";
  out += "transaction.state.log.replication.factor=" + std::to_string(std::min(3, n)) + "\n";
  out += "transaction.state.log.min.isr=" + std::to_string(std::min(2, n)) + "\n";
  return out;
}

std::string dev_bootstrap_servers(const DevClusterLayout& layout) {
  std::string out;
  for (const DevNode& n : layout.nodes) {
    if (!n.is_broker()) continue;
    if (!out.empty()) out += ',';
    out += address(n.broker_port);
  }
  return out;
}

}  // namespace samsa::cli

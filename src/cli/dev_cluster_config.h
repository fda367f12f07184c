#pragma once
// The layout and the node configurations of `samsa dev cluster`: N combined
// nodes (process.roles=broker,controller, node.id 1..N) on loopback ports,
// one static quorum of all N (controller.quorum.voters), or a split cluster
// (--controllers C: nodes 1..C controller-only, the voters; the next N
// broker-only), data under
// <root>/node-K, each node's config in <root>/node-K.properties and its
// output in <root>/node-K.log. config/cluster/node-K.properties are the
// files this writes for three nodes from base port 9092 (a unit test keeps
// them equal). Pure: no I/O.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace samsa::cli {

inline constexpr const char* kDevClusterHost = "127.0.0.1";

enum class DevRole { kCombined, kController, kBroker };

struct DevNode {
  int32_t id = 0;
  DevRole role = DevRole::kCombined;
  uint16_t broker_port = 0;
  uint16_t controller_port = 0;
  std::string data_dir;
  std::string config_path;
  std::string log_path;

  bool is_broker() const { return role != DevRole::kController; }      // has a broker listener
  bool is_controller() const { return role != DevRole::kBroker; }      // a voter
};

struct DevClusterLayout {
  std::string root;
  std::vector<DevNode> nodes;
};

// ports[k] = {broker port, controller port} of node k+1 (a split node uses
// one of the two). controllers = 0: every node combined; else the first
// `controllers` nodes are controller-only and the others broker-only.
DevClusterLayout plan_dev_cluster(const std::string& root, const std::vector<std::pair<uint16_t, uint16_t>>& ports,
                                  int controllers = 0);
// Node K of a base port P: broker P + 2(K-1), controller P + 2(K-1) + 1,
// as config/combined.properties' 9092/9093. Fails past port 65535.
std::vector<std::pair<uint16_t, uint16_t>> ports_from_base(int nodes, uint16_t base_port);

// The server.properties text of one node.
std::string render_node_config(const DevClusterLayout& layout, const DevNode& node);
// "127.0.0.1:P1,127.0.0.1:P2,...": the brokers' listeners, as bootstrap.servers.
// (controller-only nodes have none)
std::string dev_bootstrap_servers(const DevClusterLayout& layout);

}  // namespace samsa::cli

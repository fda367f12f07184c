#pragma once
// SimBrokerCluster: N combined nodes (process.roles=broker,controller) of
// real Broker objects on one SimWorld, the way `samsa server` runs them:
// controller.quorum.voters names every node on its CONTROLLER listener, so
// the metadata log is a RaftMetadataLog over the simulated stream network,
// registration and heartbeats go through the active controller, and
// creations asked of another node are forwarded to it. The scenario tests
// (cluster_sim_test.cc) and the randomized run (cluster_sim.h) share it.
//
// Node i (0-based) is node.id i+1 on host i+1 (10.0.0.<i+1>); hosts added
// after the nodes are the clients'. A node is "up" while its Broker object
// exists: crash() ends the host's incarnation (power loss or kill -9) and
// drops the objects without a clean shutdown, as a killed process's are;
// restart() boots it again on the same disk. pause() freezes the host
// (SIGSTOP: its events wait, its clock runs on), resume() thaws it.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/result.h"
#include "broker/broker.h"
#include "broker/listeners.h"
#include "config/broker_config.h"
#include "controller/topic_planner.h"
#include "testing/sim_world.h"

namespace samsa {
class Partition;
}

namespace samsa::sim {

inline constexpr uint16_t kClusterBrokerPort = 9092;
inline constexpr uint16_t kClusterControllerPort = 9093;

class SimBrokerCluster {
 public:
  // `extra` overrides or adds broker properties for every node.
  SimBrokerCluster(uint64_t seed, int nodes, std::map<std::string, std::string> extra = {});
  ~SimBrokerCluster();
  SimBrokerCluster(const SimBrokerCluster&) = delete;
  SimBrokerCluster& operator=(const SimBrokerCluster&) = delete;

  SimWorld& world() { return world_; }
  int size() const { return int(nodes_.size()); }
  HostId host(int i) const { return nodes_[size_t(i)].host; }
  NodeId id(int i) const { return nodes_[size_t(i)].id; }
  std::string address(int i) const { return world_.address(host(i)); }
  bool up(int i) const { return nodes_[size_t(i)].broker != nullptr; }
  Broker& broker(int i) { return *nodes_[size_t(i)].broker; }
  std::string voters() const;

  // Starts node i's broker (formatting its storage first when `format`).
  Status boot(int i, bool format);
  void boot_all();  // every node, formatted; ASSERTs it starts
  // Ends node i's incarnation without a clean shutdown.
  void crash(int i, CrashKind kind);
  // After a crash (or stop()): a new incarnation over the same disk.
  Status restart(int i);
  // A clean stop, as run_server after SIGTERM's controlled shutdown (or
  // without it): listeners, then Broker::shutdown(); the host stays down
  // (its page cache made durable: a clean stop loses nothing).
  void stop(int i);
  // SIGSTOP / SIGCONT of node i's host.
  void pause(int i);
  void resume(int i);
  bool paused(int i) const { return world_.paused(host(i)); }

  // The node that is the active controller (-1: none; ASSERTs at most one).
  int active();
  // Node i's image lists exactly these brokers unfenced.
  bool sees_unfenced(int i, const std::set<int32_t>& ids);
  // Every node up and sees every node unfenced, and a controller is active.
  bool formed();
  // Creates a topic through node i; the outcome once known (nullopt: done).
  std::optional<ControllerError> create(int i, const NewTopic& topic, int64_t max_ms = 15'000);
  // Partition p of `topic` as node i's image has it (nullptr: none).
  const PartitionState* partition_state(int i, const std::string& topic, int32_t p);
  // Node i's local replica of topic-p (nullptr: none or node down).
  Partition* replica(int i, const std::string& topic, int32_t p);
  // The topic is in node i's image with every partition on `rf` nodes and a
  // leader, and node i leads or follows (fetching) each as the image says.
  bool holds_replicated(int i, const std::string& topic, int32_t partitions, size_t rf);

 private:
  struct Node {
    HostId host;
    NodeId id;
    std::unique_ptr<BrokerConfig> config;
    std::unique_ptr<Broker> broker;
    std::unique_ptr<BrokerListeners> listeners;
  };
  std::map<std::string, std::string> properties(int i) const;
  void tear_down(Node& n);

  SimWorld world_;
  std::map<std::string, std::string> extra_;
  std::vector<Node> nodes_;
};

}  // namespace samsa::sim

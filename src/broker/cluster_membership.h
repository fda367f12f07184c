#pragma once
// ClusterMembership: what a node of a multi-node quorum runs besides the
// single node's parts, by its process.roles:
//   - controller role (a voter): the controller side of the broker
//     lifecycle (ClusterControlService on the controller listener:
//     BrokerRegistration, BrokerHeartbeat, fencing) and the leader balancer;
//   - broker role: the broker side (LifecycleDriver: this broker registers
//     and heartbeats to the active controller; ready to be unfenced once its
//     logs are loaded, which they are when the broker has started); a
//     controller-only node never registers, so it is never a broker of the
//     image (no replicas, not in Metadata);
//   - metadata changes forwarded to the active controller's controller
//     listener (ControllerForwarder);
//   - leadership from the image: every partition held here that another
//     broker leads is followed (ReplicaManager::become_follower, its leader's
//     inter-broker listener from the image), so followers fetch.
// The single node keeps Broker::register_self (docs/cluster.md says why).
//
// Loop-thread only. Created after the Controller, destroyed before it.

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "broker/controller_forwarder.h"
#include "broker/lifecycle_driver.h"
#include "broker/metadata_quorum.h"
#include "broker/replica_manager.h"
#include "controller/cluster_control_service.h"
#include "controller/controller_apis.h"
#include "controller/leader_balancer.h"

namespace samsa {

class ClusterMembership {
 public:
  // `leader`: the quorum leader this node knows of (the active
  // controller); `voter`: this node's quorum, nullptr on a broker-only node
  // (an observer).
  ClusterMembership(Runtime& runtime, const BrokerConfig& config, const std::string& cluster_id, uint64_t seed,
                    std::function<NodeId()> leader, MetadataQuorum* voter, MetadataLog& log, Controller& controller,
                    ReplicaManager& replicas, ControllerApis& apis, BrokerEpoch previous_broker_epoch);
  ~ClusterMembership();
  ClusterMembership(const ClusterMembership&) = delete;
  ClusterMembership& operator=(const ClusterMembership&) = delete;

  // The broker has started (logs loaded): register, then ask to be
  // unfenced (a controller-only node has nothing to do).
  void start();
  // Follows the leaders of the partitions held here, as the image says.
  void follow_leaders();
  // SIGTERM: controlled shutdown through the lifecycle (LifecycleDriver::
  // begin_controlled_shutdown), `done` when this node may stop (at once on
  // a controller-only node, which leads no partition).
  void begin_controlled_shutdown(int64_t bound_ms, std::function<void()> done);
  // UnregisterBroker on the active controller (ClusterControlService);
  // NOT_CONTROLLER on a broker-only node.
  void unregister_broker(NodeId broker, std::function<void(protocol::UnregisterBrokerResponse)> done);
  // Self-fencing: whether this broker may act as a partition leader now
  // (never on a controller-only node).
  bool may_lead() const { return driver_ && driver_->may_lead(); }
  // This process's registration epoch (kNoBrokerEpoch until registered):
  // what its AlterPartition requests carry (Kafka's
  // BrokerLifecycleManager.brokerEpoch). Never the replayed image's, which
  // after a restart is the previous incarnation's.
  BrokerEpoch broker_epoch() const { return driver_ ? driver_->lifecycle().broker_epoch() : kNoBrokerEpoch; }

  // Kafka's brokers process no request on their broker listeners until
  // they have caught up with the metadata log (BrokerServer.startup):
  // before that, a restarted node's image can lack topics the cluster has.
  bool serves_clients() const { return !driver_ || driver_->initially_caught_up(); }
  // Topic creations asked of this node while another is the active controller.
  ControllerForwarder& forwarder() { return *forwarder_; }

 private:
  Runtime& runtime_;
  const BrokerConfig& config_;
  MetadataLog& log_;
  ReplicaManager& replicas_;
  ControllerApis& apis_;
  std::unique_ptr<ClusterControlService> control_;  // controller role only
  std::unique_ptr<LeaderBalancer> balancer_;         // controller role only: auto.leader.rebalance.enable
  std::unique_ptr<LifecycleDriver> driver_;          // broker role only
  std::unique_ptr<ControllerForwarder> forwarder_;
  // The partitions followed, as set up last (topic id, leader, epoch).
  struct Followed {
    Uuid topic_id;
    LeaderEndpoint leader;
    LeaderEpoch epoch;
    bool operator==(const Followed&) const = default;
  };
  std::map<TopicPartition, Followed> followed_;
};

// The settings the controller's elections follow (unclean.leader.election.enable,
// min.insync.replicas, eligible.leader.replicas.enable), read at each use
// so that dynamic broker configs apply.
ElectionPolicy election_policy(const BrokerConfig& config);

// The controller listeners of controller.quorum.voters.
std::vector<ControllerAddress> quorum_controllers(const BrokerConfig& config);

// The controller listener of voter `id` (nullopt: not a voter), where a
// broker forwards metadata changes to the active controller, as Kafka's
// brokers do (a controller-only node has no broker listener).
std::optional<LeaderEndpoint> controller_endpoint(const BrokerConfig& config, NodeId id);

// The endpoint a follower fetches from: the broker's listener named by
// inter.broker.listener.name, else its first (nullopt: not registered).
std::optional<LeaderEndpoint> inter_broker_endpoint(const MetadataImage& image, NodeId broker,
                                                    const std::string& listener_name);

}  // namespace samsa

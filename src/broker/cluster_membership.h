#pragma once
// ClusterMembership: what a combined node (process.roles=broker,controller)
// of a multi-node quorum runs besides the single node's parts:
//   - the controller side of the broker lifecycle (ClusterControlService on
//     the controller listener: BrokerRegistration, BrokerHeartbeat, fencing);
//   - the broker side (LifecycleDriver: this broker registers and heartbeats
//     to the active controller; ready to be unfenced once its logs are
//     loaded, which they are when the broker has started);
//   - topic creations forwarded to the active controller (ControllerForwarder);
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
  ClusterMembership(Runtime& runtime, const BrokerConfig& config, const std::string& cluster_id, uint64_t seed,
                    MetadataQuorum& quorum, MetadataLog& log, Controller& controller, ReplicaManager& replicas,
                    ControllerApis& apis);
  ~ClusterMembership();
  ClusterMembership(const ClusterMembership&) = delete;
  ClusterMembership& operator=(const ClusterMembership&) = delete;

  // The broker has started (logs loaded): register, then ask to be unfenced.
  void start();
  // Follows the leaders of the partitions held here, as the image says.
  void follow_leaders();
  // SIGTERM: controlled shutdown through the lifecycle (LifecycleDriver::
  // begin_controlled_shutdown), `done` when this node may stop.
  void begin_controlled_shutdown(int64_t bound_ms, std::function<void()> done);
  // UnregisterBroker on the active controller (ClusterControlService).
  void unregister_broker(NodeId broker, std::function<void(protocol::UnregisterBrokerResponse)> done) {
    control_->unregister_broker(broker, std::move(done));
  }
  // Self-fencing: whether this broker may act as a partition leader now.
  bool may_lead() const { return driver_->may_lead(); }

  // Kafka's brokers process no request on their broker listeners until
  // they have caught up with the metadata log (BrokerServer.startup):
  // before that, a restarted node's image can lack topics the cluster has.
  bool serves_clients() const { return driver_->initially_caught_up(); }
  const LifecycleDriver& driver() const { return *driver_; }
  // Topic creations asked of this node while another is the active controller.
  ControllerForwarder& forwarder() { return *forwarder_; }

 private:
  Runtime& runtime_;
  const BrokerConfig& config_;
  MetadataLog& log_;
  ReplicaManager& replicas_;
  ControllerApis& apis_;
  std::unique_ptr<ClusterControlService> control_;
  std::unique_ptr<LeaderBalancer> balancer_;  // auto.leader.rebalance.enable
  std::unique_ptr<LifecycleDriver> driver_;
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

// The controller listeners of controller.quorum.voters.
std::vector<ControllerAddress> quorum_controllers(const BrokerConfig& config);

// The endpoint a follower fetches from: the broker's listener named by
// inter.broker.listener.name, else its first (nullopt: not registered).
std::optional<LeaderEndpoint> inter_broker_endpoint(const MetadataImage& image, NodeId broker,
                                                    const std::string& listener_name);

}  // namespace samsa

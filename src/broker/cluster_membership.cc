#include "broker/cluster_membership.h"

#include "base/log.h"

namespace samsa {
namespace {

LifecycleDriverOptions driver_options(const BrokerConfig& config, const std::string& cluster_id, Rng& rng,
                                      BrokerEpoch previous_broker_epoch) {
  LifecycleDriverOptions o;
  o.lifecycle.previous_broker_epoch = previous_broker_epoch;
  o.lifecycle.node_id = config.node_id;
  o.lifecycle.cluster_id = cluster_id;
  o.lifecycle.incarnation_id = Uuid::random(rng);  // new for every process start
  o.lifecycle.listeners = advertised_endpoints(config);
  o.lifecycle.rack = config.broker_rack;
  o.lifecycle.heartbeat_interval_ms = config.broker_heartbeat_interval_ms;
  o.lifecycle.session_timeout_ms = config.broker_session_timeout_ms;
  o.controllers = quorum_controllers(config);
  o.connect_timeout_ms = config.values().get_long("socket.connection.setup.timeout.ms");
  o.request_timeout_ms = config.values().get_int("controller.quorum.request.timeout.ms");
  return o;
}

LeaderBalancerConfig balancer_config(const BrokerConfig& config) {
  LeaderBalancerConfig c;
  c.enabled = config.values().get_bool("auto.leader.rebalance.enable");
  c.check_interval_ms = config.values().get_long("leader.imbalance.check.interval.seconds") * 1000;
  c.imbalance_percentage = config.values().get_int("leader.imbalance.per.broker.percentage");
  c.election_policy = [&config] { return election_policy(config); };
  return c;
}

}  // namespace

std::vector<ControllerAddress> quorum_controllers(const BrokerConfig& config) {
  std::vector<ControllerAddress> out;
  for (const QuorumVoter& v : config.controller_quorum_voters) out.push_back({v.id, v.host, v.port});
  return out;
}

std::optional<LeaderEndpoint> controller_endpoint(const BrokerConfig& config, NodeId id) {
  for (const QuorumVoter& v : config.controller_quorum_voters) {
    if (v.id == id) return LeaderEndpoint{id, v.host, uint16_t(v.port)};
  }
  return std::nullopt;
}

std::optional<LeaderEndpoint> inter_broker_endpoint(const MetadataImage& image, NodeId broker,
                                                    const std::string& listener_name) {
  const BrokerState* b = image.broker(broker);
  if (!b || b->listeners.empty()) return std::nullopt;
  const BrokerEndpoint* chosen = &b->listeners.front();
  for (const BrokerEndpoint& e : b->listeners) {
    if (e.name == listener_name) chosen = &e;
  }
  return LeaderEndpoint{broker, chosen->host, chosen->port};
}

ElectionPolicy election_policy(const BrokerConfig& config) {
  ElectionPolicy policy;
  policy.unclean_default = config.values().get_bool("unclean.leader.election.enable");
  policy.min_isr_default = int32_t(config.values().get_int("min.insync.replicas"));
  policy.elr_enabled = config.values().get_bool("eligible.leader.replicas.enable");
  return policy;
}

ClusterMembership::ClusterMembership(Runtime& runtime, const BrokerConfig& config, const std::string& cluster_id,
                                     uint64_t seed, std::function<NodeId()> leader, MetadataQuorum* voter,
                                     MetadataLog& log, Controller& controller, ReplicaManager& replicas,
                                     ControllerApis& apis, BrokerEpoch previous_broker_epoch)
    : runtime_(runtime), config_(config), log_(log), replicas_(replicas), apis_(apis) {
  Rng rng(seed);
  if (voter != nullptr) {
    ClusterControlConfig control{cluster_id, config.broker_session_timeout_ms};
    control_ = std::make_unique<ClusterControlService>(
        runtime, log, controller, [voter] { return voter->next_offset(); }, control,
        [&config] { return election_policy(config); });
    apis.set_broker_lifecycle(control_.get());
    balancer_ = std::make_unique<LeaderBalancer>(runtime, controller, balancer_config(config));
  }
  uint64_t driver_seed = rng.next_u64();
  if (config.is_broker()) {
    driver_ = std::make_unique<LifecycleDriver>(runtime, driver_options(config, cluster_id, rng, previous_broker_epoch), driver_seed, leader,
                                                [&log] { return log.image().applied_offset(); });
  }
  forwarder_ = std::make_unique<ControllerForwarder>(
      runtime, config.node_id, [&config, leader] { return controller_endpoint(config, leader()); });
}

ClusterMembership::~ClusterMembership() {
  if (control_) apis_.set_broker_lifecycle(nullptr);
}

void ClusterMembership::start() {
  if (!driver_) return;
  driver_->start();
  driver_->set_ready_to_unfence();
}

void ClusterMembership::begin_controlled_shutdown(int64_t bound_ms, std::function<void()> done) {
  if (!driver_) return done();
  driver_->begin_controlled_shutdown(bound_ms, std::move(done));
}

void ClusterMembership::unregister_broker(NodeId broker,
                                          std::function<void(protocol::UnregisterBrokerResponse)> done) {
  if (control_) return control_->unregister_broker(broker, std::move(done));
  protocol::UnregisterBrokerResponse response;
  response.error_code = int16_t(protocol::ErrorCode::kNotController);
  done(response);
}

// Every partition is visited: a change of a broker's registration (a new
// port) moves its followers too. What was set up is remembered, so a
// partition that already follows that leader in that epoch is left alone
// (become_follower restarts its fetch).
void ClusterMembership::follow_leaders() {
  const MetadataImage& image = log_.image();
  std::map<TopicPartition, Followed> now;
  for (const auto& [name, topic] : image.topics()) {
    for (const PartitionState& p : topic.partitions) {
      if (p.leader == config_.node_id || p.leader == kNoNode) continue;
      TopicPartition tp{name, p.partition};
      if (!replicas_.get(tp)) continue;
      std::optional<LeaderEndpoint> leader = inter_broker_endpoint(image, p.leader, config_.inter_broker_listener_name);
      if (!leader) continue;
      Followed want{topic.id, *leader, p.leader_epoch};
      auto known = followed_.find(tp);
      if (known == followed_.end() || !(known->second == want)) {
        Status followed = replicas_.become_follower(tp, *leader, p.leader_epoch);
        if (!followed.ok()) {
          LOG_WARN("replicas", "{}: {}", tp.to_string(), followed.error().to_string());
          continue;
        }
      }
      now.emplace(tp, want);
    }
  }
  followed_ = std::move(now);
}

}  // namespace samsa

#include "testing/broker_cluster_sim.h"

#include "base/assert.h"
#include "base/rng.h"
#include "broker/meta_properties.h"
#include "replication/partition.h"
#include "testing/sim_runtime.h"

namespace samsa::sim {
namespace {
const char* const kClusterId = "MkU3OEVBNTcwNTJENDM2Qg";
}

SimBrokerCluster::SimBrokerCluster(uint64_t seed, int nodes, std::map<std::string, std::string> extra)
    : world_(seed), extra_(std::move(extra)) {
  ASSERT(nodes >= 1);
  world_.set_record_trace(false);
  for (int i = 0; i < nodes; ++i) nodes_.push_back(Node{world_.add_host(), NodeId(i + 1), nullptr, nullptr, nullptr});
}

SimBrokerCluster::~SimBrokerCluster() {
  for (auto& n : nodes_) tear_down(n);
}

std::string SimBrokerCluster::voters() const {
  std::string out;
  for (const Node& n : nodes_) {
    out += (out.empty() ? "" : ",") + std::to_string(n.id.value()) + "@" + world_.address(n.host) + ":" +
           std::to_string(kClusterControllerPort);
  }
  return out;
}

std::map<std::string, std::string> SimBrokerCluster::properties(int i) const {
  const Node& n = nodes_[size_t(i)];
  std::string addr = world_.address(n.host);
  std::map<std::string, std::string> props{
      {"process.roles", "broker,controller"},
      {"node.id", std::to_string(n.id.value())},
      {"controller.quorum.voters", voters()},
      {"listeners", "PLAINTEXT://" + addr + ":" + std::to_string(kClusterBrokerPort) + ",CONTROLLER://" + addr + ":" +
                        std::to_string(kClusterControllerPort)},
      {"advertised.listeners", "PLAINTEXT://" + addr + ":" + std::to_string(kClusterBrokerPort)},
      {"controller.listener.names", "CONTROLLER"},
      {"inter.broker.listener.name", "PLAINTEXT"},
      {"listener.security.protocol.map", "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"},
      {"log.dirs", "/data/logs"},
      {"metadata.log.dir", "/data/meta"},
      {"broker.session.timeout.ms", "3000"},
      {"broker.heartbeat.interval.ms", "500"},
      {"offsets.topic.num.partitions", "1"},
      {"offsets.topic.replication.factor", "3"},
      {"default.replication.factor", "3"},
  };
  for (const auto& [k, v] : extra_) props[k] = v;
  return props;
}

Status SimBrokerCluster::boot(int i, bool format) {
  Node& n = nodes_[size_t(i)];
  ASSIGN_OR_RETURN(BrokerConfig config, BrokerConfig::from_properties(properties(i)));
  n.config = std::make_unique<BrokerConfig>(std::move(config));
  SimRuntime& runtime = world_.runtime(n.host);
  if (format) {
    Rng rng(uint64_t(n.id.value()));
    auto formatted = format_storage(runtime.files(), *n.config, FormatOptions{kClusterId}, rng);
    if (!formatted.ok()) return formatted.error();
  }
  n.broker = std::make_unique<Broker>();
  auto listeners = BrokerListeners::start(runtime, *n.config, n.broker->sink(), n.broker->controller_sink());
  if (!listeners.ok()) return listeners.error();
  n.listeners = std::move(listeners).value();
  Status started = n.broker->start(runtime, *n.config);
  if (!started.ok()) return started;
  world_.note(n.host, "broker " + std::to_string(n.id.value()) + " started");
  return Status();
}

void SimBrokerCluster::boot_all() {
  for (int i = 0; i < size(); ++i) {
    Status s = boot(i, true);
    ASSERT_MSG(s.ok(), "a simulated node did not start");
  }
}

void SimBrokerCluster::tear_down(Node& n) {
  n.listeners.reset();
  n.broker.reset();
  n.config.reset();
}

void SimBrokerCluster::crash(int i, CrashKind kind) {
  Node& n = nodes_[size_t(i)];
  if (world_.paused(n.host)) world_.resume(n.host);
  world_.crash(n.host, kind);
  tear_down(n);
}

Status SimBrokerCluster::restart(int i) {
  world_.restart(host(i));
  return boot(i, false);
}

void SimBrokerCluster::stop(int i) {
  Node& n = nodes_[size_t(i)];
  n.listeners.reset();
  if (n.broker) n.broker->shutdown();
  tear_down(n);
  // What a clean shutdown closed is durable (its files were synced at
  // close); the process is gone, so its incarnation ends with it.
  world_.crash(n.host, CrashKind::kProcess);
}

void SimBrokerCluster::pause(int i) { world_.pause(host(i)); }
void SimBrokerCluster::resume(int i) { world_.resume(host(i)); }

int SimBrokerCluster::active() {
  int found = -1;
  for (int i = 0; i < size(); ++i) {
    if (up(i) && !paused(i) && broker(i).controller().active()) {
      if (found >= 0) return -2;  // two at once: the caller's check reports it
      found = i;
    }
  }
  return found;
}

bool SimBrokerCluster::sees_unfenced(int i, const std::set<int32_t>& ids) {
  if (!up(i)) return false;
  std::set<int32_t> unfenced;
  for (const auto& [id, b] : broker(i).image().brokers()) {
    if (!b.fenced) unfenced.insert(id.value());
  }
  return unfenced == ids;
}

bool SimBrokerCluster::formed() {
  if (active() < 0) return false;
  std::set<int32_t> all;
  for (const Node& n : nodes_) all.insert(n.id.value());
  for (int i = 0; i < size(); ++i) {
    if (!sees_unfenced(i, all)) return false;
  }
  return true;
}

std::optional<ControllerError> SimBrokerCluster::create(int i, const NewTopic& topic, int64_t max_ms) {
  bool done = false;
  std::optional<ControllerError> outcome;
  broker(i).create_topic(topic, false, 10'000, [&](std::optional<ControllerError> failed) {
    done = true;
    outcome = std::move(failed);
  });
  if (!world_.run_until([&] { return done; }, max_ms)) {
    // The callback refers to this frame: the broker must not call it later.
    ASSERT_MSG(false, "a simulated topic creation had no outcome");
  }
  return outcome;
}

const PartitionState* SimBrokerCluster::partition_state(int i, const std::string& topic, int32_t p) {
  if (!up(i)) return nullptr;
  const TopicState* t = broker(i).image().topic(topic);
  return t && size_t(p) < t->partitions.size() ? &t->partitions[size_t(p)] : nullptr;
}

Partition* SimBrokerCluster::replica(int i, const std::string& topic, int32_t p) {
  if (!up(i)) return nullptr;
  return broker(i).replicas().get(TopicPartition{topic, PartitionId(p)});
}

bool SimBrokerCluster::holds_replicated(int i, const std::string& name, int32_t partitions, size_t rf) {
  if (!up(i)) return false;
  const TopicState* t = broker(i).image().topic(name);
  if (!t || t->partitions.size() != size_t(partitions)) return false;
  for (const PartitionState& p : t->partitions) {
    if (p.replicas.size() != rf || p.leader == kNoNode) return false;
    bool mine = std::find(p.replicas.begin(), p.replicas.end(), id(i)) != p.replicas.end();
    if (!mine) continue;
    Partition* local = broker(i).replicas().get(TopicPartition{name, p.partition});
    if (!local) return false;
    if (p.leader == id(i)) {
      if (!local->is_leader()) return false;
    } else {
      const ReplicaFetcherManager* fetchers = broker(i).replicas().fetchers();
      if (!local->is_follower() || !fetchers) return false;
      const ReplicaFetcher* f = fetchers->fetcher_of(TopicPartition{name, p.partition});
      if (!f || f->leader().id != p.leader || f->fetches_sent() == 0) return false;
    }
  }
  return true;
}

}  // namespace samsa::sim

#include "testing/cluster_sim.h"

#include <memory>
#include <optional>
#include <sstream>

#include "base/rng.h"
#include "replication/partition.h"
#include "testing/broker_clients.h"
#include "testing/broker_cluster_sim.h"
#include "testing/replica_invariants.h"
#include "testing/sim_file_system.h"
#include "testing/sim_runtime.h"
#include "testing/sim_stream_net.h"

namespace samsa::sim {
namespace {

constexpr const char* kTopic = "rf3";
constexpr int64_t kCheckIntervalMs = 5;
constexpr int64_t kSessionTimeoutMs = 3000;  // SimBrokerCluster's broker.session.timeout.ms
constexpr int64_t kFormDeadlineMs = 30'000;
constexpr int64_t kHealDeadlineMs = 40'000;
constexpr int64_t kReadBackDeadlineMs = 30'000;
constexpr int64_t kProduceIntervalMs = 5;
constexpr int64_t kFetchIntervalMs = 20;
constexpr int64_t kDiskLatencyMinUs = 100;
constexpr int64_t kDiskLatencyMaxUs = 5'000;

class ClusterSimRun {
 public:
  explicit ClusterSimRun(const ClusterSimOptions& options)
      : options_(options), rng_(options.seed ^ 0xc1057e55eedull), nodes_(3 + int(rng_.uniform(3))),
        partitions_(int32_t(rng_.range(1, 3))),
        cluster_(options.seed, nodes_,
                 {
                     // Small segments: rolls and their fsyncs within seconds.
                     {"log.segment.bytes", "16384"},
                     {"log.index.interval.bytes", "256"},
                     {"log.index.size.max.bytes", "8192"},
                     // A follower that stops fetching leaves the ISR within
                     // the faults' durations (Kafka's 30 s would outlast them).
                     {"replica.lag.time.max.ms", "2000"},
                     {"log.flush.offset.checkpoint.interval.ms", "500"},
                     {"replica.high.watermark.checkpoint.interval.ms", "500"},
                 }),
        history_(false) {
    history_.set_watermark_may_regress(true);
    if (options.print_trace) {
      cluster_.world().set_trace_sink([](const std::string& line) { std::printf("%s\n", line.c_str()); });
    }
    client_host_ = cluster_.world().add_host();
    for (int i = 0; i < nodes_; ++i) {
      cluster_.world().volume(cluster_.host(i)).set_latency_us(kDiskLatencyMinUs, kDiskLatencyMaxUs);
    }
    std::vector<std::pair<std::string, int32_t>> tps;
    for (int32_t p = 0; p < partitions_; ++p) tps.emplace_back(kTopic, p);
    invariants_ = std::make_unique<ReplicaInvariants>(cluster_, tps);
    result_.nodes = nodes_;
    result_.partitions = partitions_;
  }
  ~ClusterSimRun() {
    producers_.clear();
    consumers_.clear();
  }

  ClusterSimResult run();

 private:
  SimWorld& world() { return cluster_.world(); }
  bool failed(const std::string& why) {
    if (result_.failure.empty()) result_.failure = why;
    return false;
  }
  bool all_ok() const { return history_.ok() && invariants_->violations().empty(); }
  // Runs the world `ms` on, checking the replicas every kCheckIntervalMs.
  void advance(int64_t ms);
  // Runs until `done` (checked between slices) or `max_ms`; returns done().
  bool advance_until(const std::function<bool()>& done, int64_t max_ms);
  void check() {
    invariants_->check();
    ++result_.checks;
  }

  // The freshest image's view of partition p (highest partition epoch among
  // the nodes up), or nullptr.
  const PartitionState* view(int32_t p);
  int leader_index(int32_t p);  // -1: none known
  BrokerAddress locate(int32_t p);
  ClientEnv client_env(int32_t p);

  bool form_and_create();
  bool healed() { return unhealed().empty(); }
  std::string unhealed();
  void start_clients();
  void fault(const std::string& kind, const std::string& detail) {
    ++result_.faults[kind];
    world().note(kWorldHost, "fault: " + kind + " " + detail);
  }
  int pick_node();
  bool inject_fault();
  bool down_and_up(int i, const std::string& kind);
  bool graceful_restart(int i);
  bool read_back();

  ClusterSimOptions options_;
  Rng rng_;
  int nodes_;
  int32_t partitions_;
  SimBrokerCluster cluster_;
  LogHistory history_;
  HostId client_host_;
  Rng route_rng_{0};
  std::unique_ptr<ReplicaInvariants> invariants_;
  std::vector<std::unique_ptr<SimProducer>> producers_;
  std::vector<std::unique_ptr<SimConsumer>> consumers_;
  ClusterSimResult result_;
};

void ClusterSimRun::advance(int64_t ms) {
  int64_t until = world().now_ms() + ms;
  while (world().now_ms() < until) {
    world().run_for_ms(std::min(kCheckIntervalMs, until - world().now_ms()));
    check();
  }
}

bool ClusterSimRun::advance_until(const std::function<bool()>& done, int64_t max_ms) {
  int64_t until = world().now_ms() + max_ms;
  while (!done()) {
    if (world().now_ms() >= until) return false;
    world().run_for_ms(std::min(kCheckIntervalMs, until - world().now_ms()));
    check();
  }
  return true;
}

const PartitionState* ClusterSimRun::view(int32_t p) {
  const PartitionState* best = nullptr;
  for (int i = 0; i < nodes_; ++i) {
    const PartitionState* s = cluster_.partition_state(i, kTopic, p);
    if (s && (!best || s->partition_epoch > best->partition_epoch)) best = s;
  }
  return best;
}

int ClusterSimRun::leader_index(int32_t p) {
  const PartitionState* s = view(p);
  return s && s->leader != kNoNode ? s->leader.value() - 1 : -1;
}

// What a client's metadata would say: the leader as the freshest image has
// it, else any node (which answers NOT_LEADER, and the client asks again).
BrokerAddress ClusterSimRun::locate(int32_t p) {
  int leader = leader_index(p);
  int node = leader >= 0 ? leader : int(route_rng_.uniform(uint64_t(nodes_)));
  return BrokerAddress{cluster_.address(node), kClusterBrokerPort};
}

ClientEnv ClusterSimRun::client_env(int32_t p) {
  ClientEnv env;
  env.runtime = &world().runtime(client_host_);
  env.history = &history_;
  env.broker = BrokerAddress{cluster_.address(0), kClusterBrokerPort};
  env.locate = [this, p] { return locate(p); };
  env.trace = [this](const std::string& what) { world().note(client_host_, what); };
  return env;
}

bool ClusterSimRun::form_and_create() {
  cluster_.boot_all();
  if (!advance_until([&] { return cluster_.formed(); }, kFormDeadlineMs)) return failed("the cluster did not form");
  NewTopic topic{kTopic, partitions_, 3, {}, {{"min.insync.replicas", "2"}}};
  std::optional<ControllerError> refused = cluster_.create(cluster_.active(), topic);
  if (refused) return failed("creating the topic: " + refused->message);
  if (!advance_until([&] { return healed(); }, kFormDeadlineMs)) return failed("the topic's replicas did not form");
  return true;
}

// Every node up and running, a controller active, and every partition led
// with all three replicas in the ISR, its leader leading: "" when healed,
// else what is not.
std::string ClusterSimRun::unhealed() {
  for (int i = 0; i < nodes_; ++i) {
    if (!cluster_.up(i) || cluster_.paused(i)) return "node " + std::to_string(i + 1) + " down";
  }
  if (cluster_.active() < 0) return "no active controller";
  for (int32_t p = 0; p < partitions_; ++p) {
    const std::string name = partition_key(kTopic, p);
    const PartitionState* s = view(p);
    if (!s || s->leader == kNoNode) return name + " has no leader";
    if (s->isr.size() != 3) {
      std::string ends;
      for (NodeId r : s->replicas) {
        Partition* local = cluster_.replica(r.value() - 1, kTopic, p);
        if (local) ends += " node " + std::to_string(r.value()) + " log end " +
                           std::to_string(local->log().log_end_offset().value()) + " HW " +
                           std::to_string(local->high_watermark().value());
      }
      Partition* leader = cluster_.replica(s->leader.value() - 1, kTopic, p);
      if (leader) {
        ends += std::string(" leader's ISR ") + std::to_string(leader->isr().size()) + " maximal " +
                std::to_string(leader->core().maximal_isr().size()) +
                (leader->core().pending_alter_partition() ? " AlterPartition pending" : " nothing pending");
        for (NodeId r : s->replicas) {
          const BrokerState* b = cluster_.broker(s->leader.value() - 1).image().broker(r);
          if (b) ends += " b" + std::to_string(r.value()) + (b->fenced ? " fenced" : "") +
                         (b->in_controlled_shutdown ? " shutting-down" : "") + " epoch " +
                         std::to_string(b->epoch.value());
        }
      }
      return name + " has " + std::to_string(s->isr.size()) + " in its ISR (leader " +
             std::to_string(s->leader.value()) + "):" + ends;
    }
    Partition* leader = cluster_.replica(s->leader.value() - 1, kTopic, p);
    if (!leader || !leader->is_leader()) return name + ": node " + std::to_string(s->leader.value()) + " does not lead";
    if (leader->isr().size() != 3) return name + ": its leader has " + std::to_string(leader->isr().size()) + " in its ISR";
  }
  return "";
}

void ClusterSimRun::start_clients() {
  route_rng_ = Rng(rng_.next_u64());
  for (int32_t p = 0; p < partitions_; ++p) {
    auto producer = std::make_unique<SimProducer>(client_env(p), int(p), kTopic, partitions_, rng_.next_u64());
    producer->set_acks(-1);
    producer->pin_partition(p);
    producer->start(kProduceIntervalMs);
    producers_.push_back(std::move(producer));
    consumers_.push_back(std::make_unique<SimConsumer>(client_env(p), int(p), kTopic, p));
    consumers_.back()->start(kFetchIntervalMs);
  }
}

// A node to hit: a partition's leader, the active controller, or any.
int ClusterSimRun::pick_node() {
  switch (rng_.uniform(3)) {
    case 0: {
      int leader = leader_index(int32_t(rng_.uniform(uint64_t(partitions_))));
      if (leader >= 0) return leader;
      break;
    }
    case 1:
      if (int active = cluster_.active(); active >= 0) return active;
      break;
  }
  return int(rng_.uniform(uint64_t(nodes_)));
}

bool ClusterSimRun::down_and_up(int i, const std::string& kind) {
  fault(kind, "node " + std::to_string(i + 1));
  cluster_.crash(i, kind == "power-loss" ? CrashKind::kPowerLoss : CrashKind::kProcess);
  // Down briefly (back within its session) or for longer than it.
  advance(rng_.chance(0.5) ? rng_.range(10, 1000) : rng_.range(kSessionTimeoutMs, 2 * kSessionTimeoutMs));
  Status s = cluster_.restart(i);
  return s.ok() || failed("restart: " + s.error().to_string());
}

bool ClusterSimRun::graceful_restart(int i) {
  fault("graceful-shutdown", "node " + std::to_string(i + 1));
  auto ready = std::make_shared<bool>(false);
  cluster_.broker(i).begin_shutdown([ready] { *ready = true; });
  // Controlled shutdown gives up by itself when no controller answers.
  if (!advance_until([&] { return *ready; }, 30'000)) return failed("controlled shutdown never ended");
  cluster_.stop(i);
  advance(rng_.range(10, 2 * kSessionTimeoutMs));
  Status s = cluster_.restart(i);
  return s.ok() || failed("restart: " + s.error().to_string());
}

// One fault, held a while, then healed. False: the run cannot go on.
bool ClusterSimRun::inject_fault() {
  SimStreamNet& net = world().net();
  const int i = pick_node();
  switch (rng_.uniform(10)) {
    case 0:
      return down_and_up(i, "power-loss");
    case 1:
      return down_and_up(i, "kill-9");
    case 2:
      return graceful_restart(i);
    case 3: {  // two-way cut between two brokers
      int j = (i + 1 + int(rng_.uniform(uint64_t(nodes_ - 1)))) % nodes_;
      fault("cut-two-way", std::to_string(i + 1) + "<->" + std::to_string(j + 1));
      net.cut_both(cluster_.host(i), cluster_.host(j));
      break;
    }
    case 4: {  // one-way cut
      int j = (i + 1 + int(rng_.uniform(uint64_t(nodes_ - 1)))) % nodes_;
      fault("cut-one-way", std::to_string(i + 1) + "->" + std::to_string(j + 1));
      net.cut(cluster_.host(i), cluster_.host(j));
      break;
    }
    case 5: {  // a leader (or the active controller) cut from every broker, not from clients
      fault("isolate", "node " + std::to_string(i + 1) + " from the brokers");
      for (int j = 0; j < nodes_; ++j) {
        if (j != i) net.cut_both(cluster_.host(i), cluster_.host(j));
      }
      break;
    }
    case 6: {  // slow, lossy links
      fault("slow-lossy-links", "");
      LinkFaults slow;
      slow.min_latency_us = 1000;
      slow.max_latency_us = int64_t(rng_.range(5'000, 50'000));
      slow.loss = double(rng_.range(1, 20)) / 100.0;
      net.set_default_faults(slow);
      advance(rng_.range(500, 5000));
      net.set_default_faults(LinkFaults{});
      return true;
    }
    case 7: {  // a slow disk
      fault("slow-disk", "node " + std::to_string(i + 1));
      SimVolume& disk = world().volume(cluster_.host(i));
      disk.set_latency_us(1000, rng_.range(20'000, 500'000));
      advance(rng_.range(500, 5000));
      disk.set_latency_us(kDiskLatencyMinUs, kDiskLatencyMaxUs);
      return true;
    }
    default: {  // paused past the session timeout (or within it), then resumed
      fault("pause", "node " + std::to_string(i + 1));
      cluster_.pause(i);
      advance(rng_.chance(0.7) ? rng_.range(kSessionTimeoutMs + 200, 3 * kSessionTimeoutMs) : rng_.range(100, 2000));
      cluster_.resume(i);
      return true;
    }
  }
  advance(rng_.range(300, 6000));
  net.heal();
  return true;
}

// Every partition read whole from its leader, judged as after a crash that
// may lose nothing acknowledged.
bool ClusterSimRun::read_back() {
  history_.crashed(CrashKind::kProcess);
  int pending = partitions_;
  std::string error;
  for (int32_t p = 0; p < partitions_; ++p) {
    int64_t deadline = world().runtime(client_host_).now_ms() + kReadBackDeadlineMs;
    read_whole_log(client_env(p), kTopic, p, deadline, [this, p, &pending, &error](Result<std::vector<ReadRecord>> log) {
      --pending;
      std::string key = partition_key(kTopic, p);
      if (log.ok()) return history_.recovered(key, log.value());
      if (log.error().kind() == ErrorKind::kCorrupt) return history_.corrupt(key, log.error().message());
      error = log.error().to_string();
    });
  }
  if (!advance_until([&] { return pending == 0; }, kReadBackDeadlineMs + 1000)) {
    return failed("reading the logs back did not finish");
  }
  if (!error.empty()) return failed("reading the logs back: " + error);
  history_.resumed();
  return true;
}

ClusterSimResult ClusterSimRun::run() {
  if (form_and_create()) {
    start_clients();
    int64_t end = world().now_ms() + options_.duration_ms;
    while (world().now_ms() < end && result_.failure.empty() && all_ok()) {
      advance(rng_.range(200, 2000));
      if (!options_.faults) continue;
      if (!inject_fault()) break;
      if (!advance_until([&] { return healed(); }, kHealDeadlineMs)) {
        failed("the cluster did not heal within " + std::to_string(kHealDeadlineMs) + " ms of the last fault: " +
               unhealed());
      }
    }
    if (result_.failure.empty() && all_ok()) {
      for (auto& p : producers_) p->stop();
      advance(1000);
      read_back();
    }
    for (auto& p : producers_) p->stop();
    for (auto& c : consumers_) c->stop();
  }
  result_.violations = history_.violations();
  const auto& replica = invariants_->violations();
  result_.violations.insert(result_.violations.end(), replica.begin(), replica.end());
  if (!result_.violations.empty() && result_.failure.empty()) {
    const Violation& v = result_.violations.front();
    result_.failure = std::string(to_string(v.kind)) + " in " + v.partition + ": " + v.detail;
  }
  result_.ok = result_.failure.empty();
  result_.acknowledged = history_.acknowledged_records();
  result_.committed_batches = invariants_->committed_batches();
  result_.events = world().events_run();
  result_.trace_hash = world().trace_hash();
  result_.trace_lines = world().trace_lines();
  result_.simulated_ms = world().now_ms();
  return result_;
}

}  // namespace

std::string ClusterSimResult::summary() const {
  std::ostringstream s;
  s << (ok ? "ok" : "FAILED") << " nodes=" << nodes << " partitions=" << partitions << " acked=" << acknowledged
    << " committed_batches=" << committed_batches << " faults=";
  bool first = true;
  for (const auto& [kind, n] : faults) {
    s << (first ? "" : ",") << kind << ":" << n;
    first = false;
  }
  if (first) s << "none";
  s << " checks=" << checks << " sim_ms=" << simulated_ms << " events=" << events << " trace=" << std::hex
    << trace_hash << std::dec << "/" << trace_lines;
  if (!ok) s << " : " << failure;
  return s.str();
}

ClusterSimResult run_cluster_sim(const ClusterSimOptions& options) { return ClusterSimRun(options).run(); }

}  // namespace samsa::sim

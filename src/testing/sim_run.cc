#include "testing/sim_run.h"

#include <fmt/format.h>

#include "testing/kv_clients.h"
#include "testing/sim_cluster.h"

namespace samsa::sim {
namespace {

constexpr int64_t kStepMs = 5;

ClusterOptions choose_shape(Rng& rng, uint64_t seed, bool trace) {
  ClusterOptions o;
  static constexpr int kVoters[] = {1, 3, 3, 3, 5, 5};
  o.voters = kVoters[rng.uniform(6)];
  o.observers = rng.chance(0.3) ? 1 : 0;
  o.seed = seed;
  o.trace = trace;
  static constexpr double kCrashInPersist[] = {0, 0.002, 0.01};
  o.crash_in_persist = kCrashInPersist[rng.uniform(3)];
  static constexpr double kBounce[] = {0, 0, 0.002, 0.01};
  o.bounce_after_ready = kBounce[rng.uniform(4)];
  o.snapshot_every = rng.range(8, 40);
  o.raft.max_inflight_appends = size_t(rng.range(1, 4));
  // Swarm testing: some seeds turn protocol options off, which makes other
  // interleavings (e.g. competing candidates in one term) common.
  o.raft.pre_vote = !rng.chance(0.25);
  o.raft.check_quorum = !rng.chance(0.25);
  static constexpr size_t kBatch[] = {1, 1, 2, 4, 16};  // small batches split replication often
  o.raft.max_entries_per_append = kBatch[rng.uniform(5)];
  return o;
}

NetworkFaults choose_network(Rng& rng) {
  NetworkFaults f;
  f.loss = rng.chance(0.3) ? 0 : double(rng.range(0, 20)) / 100;
  f.duplicate = rng.chance(0.5) ? 0 : double(rng.range(0, 10)) / 100;
  f.min_delay_ms = 1;
  f.max_delay_ms = rng.range(2, 30);
  return f;
}

// One random fault action; returns a description for the trace.
std::string inject_fault(SimCluster& c, Rng& rng) {
  int n = int(c.nodes().size());
  NodeId victim(int32_t(rng.range(1, n)));
  // Leaders are where the interesting interleavings are: pick one often.
  if (c.leader() != kNoNode && rng.chance(0.5)) victim = c.leader();
  switch (rng.uniform(7)) {
    case 0:
    case 1:
      if (!c.node(victim).up()) return "";
      c.crash(victim);
      return fmt::format("crash n{}", victim.value());
    case 2:
    case 3:
      for (SimNode& s : c.nodes()) {
        if (!s.up()) {
          c.restart(s.id);
          return fmt::format("restart n{}", s.id.value());
        }
      }
      return "";
    case 4: {
      std::vector<int> a, b;
      for (int i = 1; i <= n; ++i) (rng.chance(0.5) ? a : b).push_back(i);
      c.network().heal();  // a new partition replaces the old one
      c.network().partition({a, b});
      return fmt::format("partition {}|{}", fmt::join(a, ","), fmt::join(b, ","));
    }
    case 5: {
      int to = int(rng.range(1, n));
      if (to == victim.value()) return "";
      c.network().block(victim.value(), to);
      return fmt::format("block {}->{}", victim.value(), to);
    }
    default:
      if (rng.chance(0.5)) {
        c.network().heal();
        return "heal";
      }
      c.network().heal();
      for (int i = 1; i <= n; ++i) {
        if (i != victim.value()) c.network().block_both(victim.value(), i);
      }
      return fmt::format("isolate n{}", victim.value());
  }
}

}  // namespace

RunResult run_seed(const RunOptions& options) {
  Rng meta(options.seed ^ 0x5a5a5a5a5a5a5a5aULL);
  ClusterOptions shape = choose_shape(meta, options.seed, options.trace);
  NetworkFaults faults = choose_network(meta);
  static constexpr double kFaultRate[] = {0.002, 0.005, 0.01, 0.03, 0.06};  // per step
  double fault_rate = kFaultRate[meta.uniform(5)];
  SimCluster cluster(shape);
  cluster.network().set_faults(faults);
  ClientOptions client_options;
  client_options.clients = int(meta.range(2, 5));
  client_options.keys = int(meta.range(1, 4));
  client_options.get_ratio = double(meta.range(3, 6)) / 10;
  KvClients clients(cluster, client_options);

  RunResult result;
  result.shape = fmt::format("voters={} observers={} pre_vote={} check_quorum={} crash_in_persist={} bounce={} "
                             "snapshot_every={} inflight={} batch={} | {} "
                             "fault_rate={} clients={} keys={}",
                             shape.voters, shape.observers, shape.raft.pre_vote, shape.raft.check_quorum,
                             shape.crash_in_persist, shape.bounce_after_ready, shape.snapshot_every,
                             shape.raft.max_inflight_appends, shape.raft.max_entries_per_append,
                             cluster.network().describe(), fault_rate, client_options.clients, client_options.keys);
  cluster.trace("shape: " + result.shape);

  auto failed = [&] { return cluster.checker().failed() || !result.failure.empty(); };
  // 1. Faults.
  while (cluster.now() < options.fault_ms && !failed()) {
    if (meta.chance(fault_rate)) {
      std::string what = inject_fault(cluster, meta);
      if (!what.empty()) cluster.trace("FAULT " + what + " | " + cluster.network().describe());
    }
    clients.step();
    cluster.run_until(cluster.now() + kStepMs);
  }
  // 2. Heal and require progress.
  cluster.network().heal();
  cluster.network().set_faults(NetworkFaults{0, 0, faults.min_delay_ms, std::min<int64_t>(faults.max_delay_ms, 10)});
  cluster.set_crash_in_persist(0);
  cluster.set_bounce_after_ready(0);
  for (SimNode& s : cluster.nodes()) cluster.restart(s.id);
  cluster.trace("FAULTS STOP: all nodes up, network healed");
  int64_t healed_at = cluster.now();
  uint64_t healed_events = cluster.events();
  while (!failed()) {
    clients.step();
    cluster.run_until(cluster.now() + kStepMs);
    if (cluster.leader() != kNoNode && clients.min_completed_since(healed_events) >= 1) {
      result.recovery_ms = cluster.now() - healed_at;
      break;
    }
    if (cluster.now() - healed_at > options.liveness_ms) {
      result.failure = fmt::format("liveness: no leader with progress within {}ms of healing (leader={})",
                                   options.liveness_ms, cluster.leader().value());
    }
  }
  // 3. Drain and check the history.
  clients.stop();
  int64_t drain_until = cluster.now() + 3000;
  while (!failed() && !clients.idle() && cluster.now() < drain_until) {
    clients.step();
    cluster.run_until(cluster.now() + kStepMs);
  }
  if (cluster.checker().failed()) result.failure = cluster.checker().failure();
  if (result.failure.empty()) {
    LinearizabilityReport lin = check_linearizable(clients.history(), options.linearizability_budget);
    if (lin.result == LinearizableResult::kViolation) result.failure = "linearizability: " + lin.detail;
    result.linearizability_unknown = lin.result == LinearizableResult::kUnknown;
  }
  result.ok = result.failure.empty();
  result.events = cluster.events();
  result.ops_completed = clients.completed();
  result.ops_ambiguous = clients.ambiguous();
  result.crashes = cluster.crashes() - cluster.bounces();
  result.bounces = cluster.bounces();
  result.leaders = cluster.checker().leaders_elected();
  result.commit = cluster.checker().max_commit().value();
  if (!result.ok) cluster.trace("FAILED: " + result.failure);
  result.trace = cluster.trace_lines();
  return result;
}

}  // namespace samsa::sim

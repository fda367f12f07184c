#pragma once
// The randomized replicated cluster in the simulator: 3-5 combined nodes of
// real Brokers (SimBrokerCluster), an RF=3 topic with min.insync.replicas=2,
// producers with acks=-1 and consumers speaking the Kafka protocol to each
// partition's leader, and faults drawn from the seed, one at a time, each
// healed before the next: power loss (unsynced writes lost) and kill -9
// with a restart, a graceful (controlled) shutdown and restart, network cuts
// two-way and one-way between brokers, a leader isolated from its followers
// (not from its clients), the active controller isolated, slow and lossy
// links, a slow disk, a node paused past broker.session.timeout.ms. At the
// end, every fault healed, every partition is read back whole from its
// leader.
//
// Judged by LogHistory (every client observation, the final read-back as
// after a crash that must lose nothing: acks=-1 with min.insync.replicas=2
// and one fault at a time loses no acknowledged record) and by
// ReplicaInvariants on the replicas, every kCheckIntervalMs.
//
// One seed gives one run and the same trace: `samsa-sim --cluster --seed N`.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "testing/log_history.h"

namespace samsa::sim {

struct ClusterSimOptions {
  uint64_t seed = 1;
  int64_t duration_ms = 20'000;  // simulated time under load and faults
  bool faults = true;
  bool print_trace = false;
};

struct ClusterSimResult {
  bool ok = false;
  std::string failure;  // the first violation or what stopped the run
  std::vector<Violation> violations;
  int nodes = 0;
  int32_t partitions = 0;
  size_t acknowledged = 0;
  size_t committed_batches = 0;
  std::map<std::string, int> faults;  // kind -> how many
  uint64_t checks = 0;
  uint64_t events = 0;
  uint64_t trace_hash = 0;
  uint64_t trace_lines = 0;
  int64_t simulated_ms = 0;
  std::string summary() const;
};

ClusterSimResult run_cluster_sim(const ClusterSimOptions& options);

}  // namespace samsa::sim

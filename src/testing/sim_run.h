#pragma once
// run_seed: one randomized simulation run, fully determined by its seed.
//
// The seed picks the cluster shape (1, 3 or 5 voters, maybe an observer),
// the network's loss/duplication/delay, how often persistence is cut by a
// crash and how often a node reboots right after a Ready. Then:
//   1. fault phase: clients run the KV workload while faults are injected at
//      random (crash, restart, symmetric partition, one-way block, isolating
//      a node, healing); invariants are checked after every event;
//   2. liveness phase: all faults stop (nodes restarted, network healed and
//      lossless); within liveness_ms there must be a leader and every client
//      must complete a command;
//   3. drain: clients stop; the history must be linearizable.

#include <cstdint>
#include <string>
#include <vector>

namespace samsa::sim {

struct RunOptions {
  uint64_t seed = 1;
  bool trace = false;
  int64_t fault_ms = 10000;
  int64_t liveness_ms = 5000;
  uint64_t linearizability_budget = 2000000;  // search steps per key
};

struct RunResult {
  bool ok = true;
  std::string failure;
  std::string shape;  // what the seed chose
  uint64_t events = 0;
  size_t ops_completed = 0;
  size_t ops_ambiguous = 0;
  size_t crashes = 0;
  size_t bounces = 0;  // reboots right after a Ready
  size_t leaders = 0;
  int64_t commit = 0;
  int64_t recovery_ms = -1;  // from healing to leader + progress
  bool linearizability_unknown = false;
  std::vector<std::string> trace;
};

RunResult run_seed(const RunOptions& options);

}  // namespace samsa::sim

#pragma once
// The whole single broker in the simulator: the real Broker (the classes
// `samsa server` runs) on a SimRuntime, its listeners on the simulated
// network, its logs on a SimVolume, and simulated clients on a second host
// that speak the real Kafka protocol to it (broker_clients.h). Faults are
// drawn from the seed: crashes (power loss or kill -9) and restarts, disk
// errors (EIO, ENOSPC) and slow disks, connection resets. LogHistory judges
// every produce, fetch and ListOffsets as it happens, every restart's
// recovered log, and the final log; TopicHistory the topics created and
// deleted at run time; GroupHistory the committed group offsets.
//
// One seed gives one run, and the same trace byte for byte:
// `samsa-sim --broker --seed N [--trace]` replays it; `--seeds N` searches.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "testing/log_history.h"

namespace samsa::sim {

// Which clients run beside the producers and consumers (always there).
struct BrokerSimMix {
  bool drawn = true;          // each of the below drawn from the seed
  bool offset_lister = false;  // ListOffsets earliest/latest on the main topic
  bool topic_churn = false;    // create, write, read, delete, re-create a topic
  bool group = false;          // two members of a consumer group committing offsets
  // "drawn" (the default), "all", "base" (producers and consumers only), or
  // one of "offsets", "churn", "group" (that client alone beside the base).
  static std::optional<BrokerSimMix> named(const std::string& name);
};

struct BrokerSimOptions {
  uint64_t seed = 1;
  int64_t duration_ms = 30'000;  // simulated time under load and faults
  int producers = 3;
  int32_t partitions = 2;
  bool faults = true;
  BrokerSimMix mix;
  bool print_trace = false;  // every trace line to stdout as it happens
};

struct BrokerSimResult {
  bool ok = false;
  std::string failure;              // the first violation or what stopped the run
  std::vector<Violation> violations;
  // What the run did, for the summary line.
  bool fsync_every_message = false;
  size_t acknowledged = 0;
  size_t lost_allowed = 0;
  int crashes = 0;
  int disk_faults = 0;
  int resets = 0;
  BrokerSimMix mix;                 // as drawn
  size_t list_offsets_answers = 0;
  int topic_incarnations = 0;
  size_t group_commits_acknowledged = 0;
  int group_generations = 0;
  uint64_t events = 0;
  uint64_t trace_hash = 0;
  uint64_t trace_lines = 0;
  std::string summary() const;
};

BrokerSimResult run_broker_sim(const BrokerSimOptions& options);

}  // namespace samsa::sim

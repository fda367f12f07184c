#pragma once
// SimNetwork: the fault model of the simulated network — per-send delay,
// loss, duplication (reordering follows from random delays), and directed
// link blocks (a symmetric partition blocks both directions, a one-way
// partition one). Addresses are ints: node ids, and clients at 1000+.
// It only decides; SimCluster's event queue carries the packets.

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/rng.h"

namespace samsa::sim {

struct NetworkFaults {
  double loss = 0;       // probability a send is dropped
  double duplicate = 0;  // probability it is delivered twice
  int64_t min_delay_ms = 1;
  int64_t max_delay_ms = 8;
};

class SimNetwork {
 public:
  void set_faults(const NetworkFaults& faults) { faults_ = faults; }
  const NetworkFaults& faults() const { return faults_; }

  void block(int from, int to) { blocked_.insert({from, to}); }
  void block_both(int a, int b) {
    block(a, b);
    block(b, a);
  }
  // Cut every link between different groups (in both directions).
  void partition(const std::vector<std::vector<int>>& groups);
  void heal() { blocked_.clear(); }
  bool blocked(int from, int to) const { return blocked_.count({from, to}) != 0; }
  bool partitioned() const { return !blocked_.empty(); }

  // When copies of one send arrive (ms from now): none if dropped or
  // blocked, two if duplicated.
  std::vector<int64_t> plan(int from, int to, Rng& rng) const;
  std::string describe() const;

 private:
  NetworkFaults faults_;
  std::set<std::pair<int, int>> blocked_;
};

}  // namespace samsa::sim

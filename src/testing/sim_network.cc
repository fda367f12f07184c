#include "testing/sim_network.h"

#include <fmt/format.h>

namespace samsa::sim {

void SimNetwork::partition(const std::vector<std::vector<int>>& groups) {
  for (size_t g = 0; g < groups.size(); ++g) {
    for (size_t h = 0; h < groups.size(); ++h) {
      if (g == h) continue;
      for (int a : groups[g]) {
        for (int b : groups[h]) block(a, b);
      }
    }
  }
}

std::vector<int64_t> SimNetwork::plan(int from, int to, Rng& rng) const {
  std::vector<int64_t> out;
  if (blocked(from, to)) return out;
  if (faults_.loss > 0 && rng.chance(faults_.loss)) return out;
  out.push_back(rng.range(faults_.min_delay_ms, faults_.max_delay_ms));
  if (faults_.duplicate > 0 && rng.chance(faults_.duplicate)) {
    out.push_back(rng.range(faults_.min_delay_ms, faults_.max_delay_ms * 3));
  }
  return out;
}

std::string SimNetwork::describe() const {
  std::string s = fmt::format("loss={:.2f} dup={:.2f} delay={}..{}ms blocked:", faults_.loss, faults_.duplicate,
                              faults_.min_delay_ms, faults_.max_delay_ms);
  for (auto& [a, b] : blocked_) s += fmt::format(" {}->{}", a, b);
  return s;
}

}  // namespace samsa::sim

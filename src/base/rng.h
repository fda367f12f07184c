#pragma once
// Rng: a small, fast, seeded generator (xoshiro256**, seeded by splitmix64).
// Every random choice in a pure core or simulation comes from one of these,
// so a seed replays a run exactly.

#include <cstdint>

namespace samsa {

class Rng {
 public:
  explicit Rng(uint64_t seed);
  uint64_t next_u64();
  // Uniform in [0, bound); bound > 0.
  uint64_t uniform(uint64_t bound);
  // Uniform in [lo, hi]; lo <= hi.
  int64_t range(int64_t lo, int64_t hi);
  // True with probability p (0..1).
  bool chance(double p);

 private:
  uint64_t s_[4];
};

}  // namespace samsa

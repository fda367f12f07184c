#include "base/rng.h"

#include <gtest/gtest.h>

namespace samsa {

TEST(Rng, SameSeedSameSequence) {
  Rng a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    uint64_t x = a.next_u64();
    EXPECT_EQ(x, b.next_u64());
    differs |= x != c.next_u64();
  }
  EXPECT_TRUE(differs);
}

TEST(Rng, RangeStaysInBounds) {
  Rng r(7);
  for (int i = 0; i < 10000; ++i) {
    int64_t v = r.range(-3, 5);
    EXPECT_GE(v, -3);
    EXPECT_LE(v, 5);
  }
}

}  // namespace samsa

#include "model/ids.h"

#include <gtest/gtest.h>

#include <type_traits>

namespace samsa {

TEST(Ids, StrongTypesDoNotMix) {
  static_assert(!std::is_convertible_v<Offset, LeaderEpoch>);
  static_assert(!std::is_convertible_v<int64_t, Offset>);
  static_assert(!std::is_convertible_v<Offset, int64_t>);
  Offset a(10);
  Offset b = a + 5;
  EXPECT_EQ(b - a, 5);
  EXPECT_LT(a, b);
}

}  // namespace samsa

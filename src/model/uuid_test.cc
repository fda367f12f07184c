#include "model/uuid.h"

#include <gtest/gtest.h>

#include "base/rng.h"

namespace samsa {

TEST(Uuid, TextRoundTrip) {
  Rng rng(1);
  for (int i = 0; i < 100; ++i) {
    Uuid u = Uuid::random(rng);
    std::string s = u.to_string();
    EXPECT_EQ(s.size(), 22u);
    auto back = Uuid::parse(s);
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, u);
  }
}

TEST(Uuid, KnownKafkaText) {
  // Kafka prints Uuid(0, 1) as AAAAAAAAAAAAAAAAAAAAAQ.
  Uuid u;
  u.bytes[15] = 1;
  EXPECT_EQ(u.to_string(), "AAAAAAAAAAAAAAAAAAAAAQ");
  EXPECT_FALSE(Uuid::parse("not-a-uuid").has_value());
  EXPECT_TRUE(Uuid().is_zero());
}

}  // namespace samsa

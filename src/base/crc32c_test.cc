#include "base/crc32c.h"

#include <gtest/gtest.h>

#include <string>

namespace samsa {

TEST(Crc32c, KnownVectors) {
  EXPECT_EQ(crc32c(as_bytes("")), 0u);
  EXPECT_EQ(crc32c(as_bytes("123456789")), 0xE3069283u);
  std::string zeros(32, '\0');
  EXPECT_EQ(crc32c(as_bytes(zeros)), 0x8A9136AAu);  // RFC 3720 B.4
}

TEST(Crc32c, ExtendEqualsWhole) {
  std::string s = "The quick brown fox jumps over the lazy dog, many times over.";
  for (size_t split = 0; split <= s.size(); ++split) {
    uint32_t part = crc32c_extend(crc32c(as_bytes(s.substr(0, split))), as_bytes(s.substr(split)));
    EXPECT_EQ(part, crc32c(as_bytes(s))) << split;
  }
}

}  // namespace samsa

#include "base/crc32c.h"
#include "base/rng.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace samsa {
namespace {

// The reference the fast paths are held to: CRC-32C one bit at a time,
// written straight from the definition and sharing nothing with crc32c.cc.
uint32_t reference_extend_byte(uint32_t crc, uint8_t byte) {
  crc ^= byte;
  for (int k = 0; k < 8; ++k) crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
  return crc;
}

// Inputs must not be zeros: the crc state of a run of zeros started from 0
// stays 0, which would hide a wrong combination of the interleaved streams.
Bytes random_bytes(size_t n, uint64_t seed) {
  Bytes b(n);
  Rng rng(seed);
  for (auto& c : b) c = uint8_t(rng.next_u64() >> 56);
  return b;
}

// Checks crc32c(data[0, len)) against the reference for every len in
// `lengths` (ascending), running the reference once over the longest prefix.
void expect_prefixes_match_reference(ByteView data, const std::vector<size_t>& lengths) {
  uint32_t state = ~0u;  // the reference's running state before the final inversion
  size_t done = 0;
  for (size_t len : lengths) {
    ASSERT_LE(len, data.size());
    ASSERT_GE(len, done);
    for (; done < len; ++done) state = reference_extend_byte(state, data[done]);
    ASSERT_EQ(crc32c(data.first(len)), ~state) << "length " << len;
  }
}

TEST(Crc32c, KnownVectors) {
  EXPECT_EQ(crc32c(as_bytes("")), 0u);
  EXPECT_EQ(crc32c(as_bytes("123456789")), 0xE3069283u);
  std::string zeros(32, '\0');
  EXPECT_EQ(crc32c(as_bytes(zeros)), 0x8A9136AAu);  // RFC 3720 B.4
  std::string ones(32, '\xff');
  EXPECT_EQ(crc32c(as_bytes(ones)), 0x62A8AB43u);  // RFC 3720 B.4
}

TEST(Crc32c, ExtendEqualsWhole) {
  std::string s = "The quick brown fox jumps over the lazy dog, many times over.";
  for (size_t split = 0; split <= s.size(); ++split) {
    uint32_t part = crc32c_extend(crc32c(as_bytes(s.substr(0, split))), as_bytes(s.substr(split)));
    EXPECT_EQ(part, crc32c(as_bytes(s))) << split;
  }
}

// Every short length (where the single-stream and three-stream paths and
// their tails meet) at every alignment.
TEST(Crc32c, EveryLengthAndAlignmentMatchesReference) {
  Bytes data = random_bytes(4096 + 16, 1);
  std::vector<size_t> lengths;
  for (size_t len = 0; len <= 4096; ++len) lengths.push_back(len);
  for (size_t offset = 0; offset < 16; ++offset) {
    SCOPED_TRACE(offset);
    expect_prefixes_match_reference(ByteView(data).subspan(offset, 4096), lengths);
  }
}

// Medium lengths: many rounds of the interleaved streams plus every size
// of tail, whatever the block size is.
TEST(Crc32c, MediumLengthsMatchReference) {
  Bytes data = random_bytes(1 << 16, 2);
  std::vector<size_t> lengths;
  for (size_t len = 4096; len <= data.size(); len += 61) lengths.push_back(len);
  expect_prefixes_match_reference(data, lengths);
}

TEST(Crc32c, LargeLengthsMatchReference) {
  constexpr size_t kMiB = size_t(1) << 20;
  Bytes data = random_bytes(4 * kMiB + 4096 + 16, 3);
  std::vector<size_t> lengths;
  for (size_t base : {kMiB, 4 * kMiB})
    for (size_t tail : {0, 1, 3, 7, 8, 9, 63, 255, 256, 257, 767, 768, 769, 1000, 2047, 3071, 4095})
      lengths.push_back(base + tail);
  for (size_t offset : {0, 1, 5, 13}) {
    SCOPED_TRACE(offset);
    expect_prefixes_match_reference(ByteView(data).subspan(offset), lengths);
  }
}

TEST(Crc32c, ExtendAcrossAnySplitOfLongBuffer) {
  Bytes data = random_bytes(20000, 4);
  const uint32_t whole = crc32c(data);
  for (size_t split = 0; split <= data.size(); split += 7) {
    ByteView view(data);
    uint32_t chained = crc32c_extend(crc32c(view.first(split)), view.subspan(split));
    ASSERT_EQ(chained, whole) << "split " << split;
  }
}

TEST(Crc32c, ExtendOverRandomChunks) {
  Bytes data = random_bytes(3 << 20, 5);
  const uint32_t whole = crc32c(data);
  Bytes sizes = random_bytes(4096, 6);
  for (int scale : {1, 16, 256}) {  // chunks up to 255, 4095 and 65535 bytes
    ByteView rest(data);
    uint32_t chained = 0;
    for (size_t i = 0; !rest.empty(); ++i) {
      size_t chunk = std::min(rest.size(), size_t(sizes[i % sizes.size()]) * size_t(scale));
      chained = crc32c_extend(chained, rest.first(chunk));
      rest = rest.subspan(chunk);
    }
    EXPECT_EQ(chained, whole) << "scale " << scale;
  }
}

}  // namespace
}  // namespace samsa

// Every generated message, every version: a value with every field set
// encodes, decodes to an equal value consuming all bytes, and re-encodes to
// the same bytes. Truncations and hostile lengths fail cleanly.

#include <gtest/gtest.h>

#include "base/byte_reader.h"
#include "base/rng.h"
#include "protocol/codec_test_support.h"
#include "protocol/generated/apis.h"

namespace samsa::protocol::testing {
namespace {

TEST(RoundTripTest, EveryMessageEveryVersion) {
  int checked = 0;
  for (const CodecCase& c : codec_cases()) {
    for (int16_t v = c.min_version; v <= c.max_version; ++v) {
      for (int seed = 0; seed < 2; ++seed) {
        EXPECT_EQ(c.round_trip(v, seed), "") << c.name << " v" << v << " seed " << seed;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 300);
}

TEST(RoundTripTest, EveryApiHasRequestAndResponse) {
  for (const ApiInfo& api : all_apis()) {
    int found = 0;
    for (const CodecCase& c : codec_cases()) {
      if (c.api_key == int16_t(api.key)) {
        ++found;
        EXPECT_EQ(c.min_version, api.min_version) << c.name;
        EXPECT_EQ(c.max_version, api.max_version) << c.name;
      }
    }
    EXPECT_EQ(found, 2) << api.name;
  }
}

// A truncated encoding can never decode: parsing is deterministic, so a
// prefix parse needs the same bytes as the full one.
TEST(MalformedTest, EveryTruncationFails) {
  for (const CodecCase& c : codec_cases()) {
    for (int16_t v = c.min_version; v <= c.max_version; ++v) {
      Bytes full = c.sample(v, 0);
      ASSERT_EQ(c.reencode(full, v, nullptr), "") << c.name << " v" << v;
      for (size_t n = 0; n < full.size(); ++n) {
        ByteView prefix(full.data(), n);
        EXPECT_NE(c.reencode(prefix, v, nullptr), "") << c.name << " v" << v << " cut at " << n;
      }
    }
  }
}

// Random byte flips never crash the decoder (they may or may not decode).
TEST(MalformedTest, CorruptedBytesNeverCrash) {
  Rng rng(42);
  for (const CodecCase& c : codec_cases()) {
    for (int16_t v = c.min_version; v <= c.max_version; ++v) {
      Bytes full = c.sample(v, 0);
      for (int round = 0; round < 40 && !full.empty(); ++round) {
        Bytes bad = full;
        for (int flips = 0; flips < 3; ++flips) bad[rng.uniform(bad.size())] = uint8_t(rng.uniform(256));
        Bytes out;
        (void)c.reencode(bad, v, &out);
      }
    }
  }
}

TEST(MalformedTest, HugeArrayCountFailsFast) {
  // ProduceRequest v3: transactional_id null, acks, timeout, then a topic
  // array claiming 2^31-1 elements with 10 bytes left.
  Bytes b = {0xff, 0xff, 0, 1, 0, 0, 0, 100, 0x7f, 0xff, 0xff, 0xff, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  for (const CodecCase& c : codec_cases()) {
    if (std::string(c.name) == "ProduceRequest") {
      EXPECT_NE(c.reencode(b, 3, nullptr), "");
      b[8] = 0x80;  // negative count other than -1
      b[11] = 0x00;
      EXPECT_NE(c.reencode(b, 3, nullptr), "");
    }
  }
}

TEST(MalformedTest, VersionOutOfRangeFails) {
  for (const CodecCase& c : codec_cases()) {
    Bytes full = c.sample(c.max_version, 0);
    EXPECT_NE(c.reencode(full, int16_t(c.max_version + 1), nullptr), "") << c.name;
    EXPECT_NE(c.reencode(full, -1, nullptr), "") << c.name;
  }
}

}  // namespace
}  // namespace samsa::protocol::testing

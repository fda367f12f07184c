// The decoder's written limits on counts (codec.h): Kafka refuses arrays of
// more than 1,000,000 elements and tagged-field sections of more than 10,000
// fields before allocating, even when the bytes are there.

#include <gtest/gtest.h>

#include "base/byte_writer.h"
#include "protocol/codec.h"
#include "protocol/codec_test_support.h"
#include "protocol/generated/fetch.h"
#include "protocol/request_header.h"

namespace samsa::protocol::testing {
namespace {

// An int32 (or compact) array count followed by `count` one-byte elements.
Bytes array_of_bytes(bool flex, int32_t count) {
  Bytes out;
  ByteWriter w(out);
  if (flex) {
    w.write_uvarint(uint32_t(count) + 1);
  } else {
    w.write_i32(count);
  }
  out.resize(out.size() + size_t(count), 7);
  return out;
}

bool reads_array(bool flex, int32_t count) {
  Bytes in = array_of_bytes(flex, count);
  ByteReader r(in);
  int32_t n = -2;
  return read_array_length(r, flex, 1, n) && n == count;
}

TEST(CodecLimitsTest, ArraysUpToTheLimitDecode) {
  EXPECT_TRUE(reads_array(false, kMaxArrayElements));
  EXPECT_TRUE(reads_array(true, kMaxArrayElements));
}

TEST(CodecLimitsTest, ArraysOverTheLimitFailEvenWhenTheBytesAreThere) {
  EXPECT_FALSE(reads_array(false, kMaxArrayElements + 1));
  EXPECT_FALSE(reads_array(true, kMaxArrayElements + 1));
}

// A tagged-field section of `count` empty fields with an unknown tag.
Bytes tagged_section(uint32_t count) {
  Bytes out;
  ByteWriter w(out);
  w.write_uvarint(count);
  for (uint32_t i = 0; i < count; ++i) {
    w.write_uvarint(1000);  // tag
    w.write_uvarint(0);     // size
  }
  return out;
}

TEST(CodecLimitsTest, TaggedFieldSectionsUpToTheLimitAreSkipped) {
  Bytes in = tagged_section(kMaxTaggedFields);
  ByteReader r(in);
  EXPECT_TRUE(skip_tagged_fields(r));
  EXPECT_TRUE(r.at_end());
}

TEST(CodecLimitsTest, TooManyTaggedFieldsFailToDecode) {
  Bytes in = tagged_section(kMaxTaggedFields + 1);
  ByteReader r(in);
  EXPECT_FALSE(skip_tagged_fields(r));
}

// FetchRequest v12 has known tags at the top level, decoded by generated
// code (not skip_tagged_fields): its section obeys the same limit.
Bytes fetch_v12_with_tagged_fields(uint32_t count) {
  Bytes body = encode_to_bytes(FetchRequest{}, 12);
  EXPECT_EQ(body.back(), 0);  // the top-level tagged-field section, empty
  body.pop_back();
  Bytes tags = tagged_section(count);
  body.insert(body.end(), tags.begin(), tags.end());
  return body;
}

TEST(CodecLimitsTest, GeneratedDecodersApplyTheTaggedFieldLimit) {
  FetchRequest m;
  Bytes ok = fetch_v12_with_tagged_fields(kMaxTaggedFields);
  ByteReader r1(ok);
  EXPECT_TRUE(m.decode(r1, 12));
  EXPECT_TRUE(r1.at_end());
  Bytes bad = fetch_v12_with_tagged_fields(kMaxTaggedFields + 1);
  ByteReader r2(bad);
  EXPECT_FALSE(m.decode(r2, 12));
}

TEST(CodecLimitsTest, RequestHeaderAppliesTheTaggedFieldLimit) {
  RequestHeader h;
  h.api_key = 1;  // Fetch v12: header v2, with a tagged-field section
  h.api_version = 12;
  h.client_id = "c";
  OutBuffer out;
  h.encode(out);
  Bytes frame = out.bytes();
  ASSERT_EQ(frame.back(), 0);
  frame.pop_back();
  Bytes tags = tagged_section(kMaxTaggedFields + 1);
  frame.insert(frame.end(), tags.begin(), tags.end());
  ByteReader r(frame);
  EXPECT_FALSE(h.decode(r));
}

}  // namespace
}  // namespace samsa::protocol::testing

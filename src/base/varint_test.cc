#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "base/byte_reader.h"
#include "base/byte_writer.h"

namespace samsa {

TEST(Varint, UnsignedRoundTripEdges) {
  for (uint32_t v : {0u, 1u, 127u, 128u, 16383u, 16384u, 0x0fffffffu, 0xffffffffu}) {
    Bytes out;
    ByteWriter w(out);
    w.write_uvarint(v);
    EXPECT_EQ(int(out.size()), uvarint_size(v));
    ByteReader r(out);
    EXPECT_EQ(r.read_uvarint(), v);
    EXPECT_TRUE(r.ok());
    EXPECT_TRUE(r.at_end());
  }
}

TEST(Varint, ZigZagRoundTripEdges) {
  for (int64_t v : {int64_t(0), int64_t(-1), int64_t(1), int64_t(-64), int64_t(64),
                    std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}) {
    Bytes out;
    ByteWriter w(out);
    w.write_varlong(v);
    EXPECT_EQ(int(out.size()), varlong_size(v));
    ByteReader r(out);
    EXPECT_EQ(r.read_varlong(), v);
    EXPECT_TRUE(r.ok());
  }
  for (int32_t v : {0, -1, 1, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()}) {
    Bytes out;
    ByteWriter w(out);
    w.write_varint(v);
    ByteReader r(out);
    EXPECT_EQ(r.read_varint(), v);
  }
}

TEST(Varint, ZigZagKnownEncodings) {
  Bytes out;
  ByteWriter w(out);
  w.write_varint(-1);  // zig-zag 1
  w.write_varint(1);   // zig-zag 2
  w.write_varint(-64); // zig-zag 127
  w.write_varint(64);  // zig-zag 128 -> 0x80 0x01
  EXPECT_EQ(out, (Bytes{0x01, 0x02, 0x7f, 0x80, 0x01}));
}

TEST(Varint, TruncatedAndOverlongFail) {
  Bytes truncated{0x80, 0x80};
  ByteReader r1(truncated);
  r1.read_uvarint();
  EXPECT_FALSE(r1.ok());

  Bytes overlong{0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  ByteReader r2(overlong);
  r2.read_uvarint();
  EXPECT_FALSE(r2.ok());

  Bytes too_big_for_32{0xff, 0xff, 0xff, 0xff, 0x1f};
  ByteReader r3(too_big_for_32);
  r3.read_uvarint();
  EXPECT_FALSE(r3.ok());
}

TEST(ByteReader, BoundsAreChecked) {
  Bytes b{0, 1, 2};
  ByteReader r(b);
  EXPECT_EQ(r.read_i16(), 1);
  EXPECT_EQ(r.read_i32(), 0);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.remaining(), 0u);
  EXPECT_TRUE(r.read_bytes(1).empty());
}

}  // namespace samsa

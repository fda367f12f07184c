// Request/response headers, framing and the API table.

#include <gtest/gtest.h>

#include "base/byte_reader.h"
#include "protocol/codec.h"
#include "protocol/error_code.h"
#include "protocol/generated/api_versions.h"
#include "protocol/generated/apis.h"
#include "protocol/request_header.h"
#include "protocol/response_header.h"

namespace samsa::protocol {
namespace {

TEST(RequestHeaderTest, V1NonFlexible) {
  // Metadata v1 (header v1): key 3, version 1, correlation 7, client "ab", body byte.
  Bytes b = {0, 3, 0, 1, 0, 0, 0, 7, 0, 2, 'a', 'b', 0xee};
  ByteReader r(b);
  RequestHeader h;
  ASSERT_TRUE(h.decode(r));
  EXPECT_EQ(h.api_key, 3);
  EXPECT_EQ(h.api_version, 1);
  EXPECT_EQ(h.correlation_id, 7);
  EXPECT_EQ(h.client_id, "ab");
  EXPECT_TRUE(h.supported);
  EXPECT_EQ(h.header_version, 1);
  EXPECT_EQ(r.remaining(), 1u);
}

TEST(RequestHeaderTest, V2FlexibleKeepsInt16ClientIdAndSkipsTags) {
  // ApiVersions v3: client_id null (int16 -1), then one unknown tagged field.
  Bytes b = {0, 18, 0, 3, 0, 0, 1, 0, 0xff, 0xff, 1, 5, 2, 9, 9, 0xee};
  ByteReader r(b);
  RequestHeader h;
  ASSERT_TRUE(h.decode(r));
  EXPECT_EQ(h.api_key, 18);
  EXPECT_EQ(h.correlation_id, 256);
  EXPECT_FALSE(h.client_id.has_value());
  EXPECT_EQ(h.header_version, 2);
  EXPECT_EQ(r.remaining(), 1u);
}

TEST(RequestHeaderTest, UnknownVersionStillParses) {
  // ApiVersions v9 (newer than we know): flexible ranges are open-ended => v2.
  Bytes b = {0, 18, 0, 9, 0, 0, 0, 1, 0, 1, 'x', 0};
  ByteReader r(b);
  RequestHeader h;
  ASSERT_TRUE(h.decode(r));
  EXPECT_FALSE(h.supported);
  EXPECT_EQ(h.api_version, 9);
  EXPECT_EQ(h.header_version, 2);
  EXPECT_TRUE(r.at_end());
  // Unknown key: key/version/correlation are still available.
  Bytes u = {0x7f, 0x00, 0, 0, 0, 0, 0, 5, 0xff, 0xff};
  ByteReader ru(u);
  RequestHeader hu;
  ASSERT_TRUE(hu.decode(ru));
  EXPECT_FALSE(hu.supported);
  EXPECT_EQ(hu.correlation_id, 5);
}

TEST(RequestHeaderTest, TruncatedFails) {
  Bytes b = {0, 3, 0, 1, 0, 0, 0, 7, 0, 2, 'a', 'b'};
  for (size_t n = 0; n < b.size(); ++n) {
    ByteReader r(ByteView(b.data(), n));
    RequestHeader h;
    EXPECT_FALSE(h.decode(r)) << n;
  }
  Bytes neg = {0, 3, 0, 1, 0, 0, 0, 7, 0xff, 0xfe};  // client_id length -2
  ByteReader r(neg);
  RequestHeader h;
  EXPECT_FALSE(h.decode(r));
}

TEST(RequestHeaderTest, EncodeDecodeRoundTrip) {
  for (int16_t version : {int16_t(0), int16_t(9), int16_t(12)}) {
    RequestHeader h;
    h.api_key = 3;
    h.api_version = version;
    h.correlation_id = 42;
    h.client_id = "client";
    OutBuffer out;
    h.encode(out);
    ByteReader r(out.bytes());
    RequestHeader d;
    ASSERT_TRUE(d.decode(r));
    EXPECT_TRUE(r.at_end());
    EXPECT_EQ(d.client_id, "client");
    EXPECT_EQ(d.header_version, version >= 9 ? 2 : 1);
  }
}

TEST(ResponseHeaderTest, Versions) {
  EXPECT_EQ(response_header_version(3, 8), 0);
  EXPECT_EQ(response_header_version(3, 9), 1);
  EXPECT_EQ(response_header_version(18, 3), 0);  // ApiVersions: always v0
  EXPECT_EQ(response_header_version(18, 0), 0);
  EXPECT_EQ(response_header_version(17, 1), 0);  // SaslHandshake: never flexible
  EXPECT_EQ(response_header_version(1, 12), 1);
}

TEST(ResponseHeaderTest, FrameSizeCountsSplicedRegions) {
  OutBuffer out;
  begin_response(out, 0x01020304, 1, 12);  // Fetch v12: header v1
  EXPECT_EQ(out.bytes(), (Bytes{0, 0, 0, 0, 1, 2, 3, 4, 0}));
  Encoder w(out);
  FileRegion region;
  region.size = 100;
  w.write_records(true, RecordSet::file(region), true);
  finish_response(out);
  ASSERT_EQ(out.splices().size(), 1u);
  EXPECT_EQ(out.splices()[0].at, 10u);  // after the size, header and varint length (101)
  EXPECT_EQ(load_be32(out.bytes().data()), 4u + 1u + 1u + 100u);
}

TEST(ResponseHeaderTest, ApiVersionsV0Fallback) {
  // The broker answers an unknown ApiVersions version with a v0 body.
  ApiVersionsResponse resp;
  resp.error_code = to_int16(ErrorCode::kUnsupportedVersion);
  resp.api_keys.push_back({.api_key = 18, .min_version = 0, .max_version = 4});
  OutBuffer out;
  begin_response(out, 9, 18, 7);
  Encoder w(out);
  resp.encode(w, 0);
  finish_response(out);
  EXPECT_EQ(out.bytes(), (Bytes{0, 0, 0, 16, 0, 0, 0, 9, 0, 35, 0, 0, 0, 1, 0, 18, 0, 0, 0, 4}));
}

TEST(ApiTableTest, FindApi) {
  const ApiInfo* produce = find_api(0);
  ASSERT_NE(produce, nullptr);
  EXPECT_STREQ(produce->name, "Produce");
  EXPECT_EQ(produce->max_version, 13);
  EXPECT_EQ(produce->first_flexible_version, 9);
  EXPECT_EQ(find_api(-1), nullptr);
  EXPECT_EQ(find_api(4), nullptr);  // LeaderAndIsr: not defined
  EXPECT_EQ(find_api(999), nullptr);
  EXPECT_EQ(find_api(1002), nullptr);
  ASSERT_NE(find_api(1000), nullptr);  // SamsaRaftPush: Samsa-private, outside Kafka's range
  EXPECT_STREQ(api_name(1000), "SamsaRaftPush");
  ASSERT_NE(find_api(1001), nullptr);  // SamsaRaftFetch: Samsa-private too
  EXPECT_STREQ(api_name(1001), "SamsaRaftFetch");
  EXPECT_STREQ(api_name(18), "ApiVersions");
  int16_t last = -1;
  for (const ApiInfo& api : all_apis()) {
    EXPECT_GT(int16_t(api.key), last);
    last = int16_t(api.key);
    EXPECT_EQ(find_api(last), &api);
  }
  EXPECT_EQ(find_api(17)->first_flexible_version, -1);
}

TEST(ErrorCodeTest, Names) {
  EXPECT_STREQ(error_name(ErrorCode::kNotLeaderOrFollower), "NOT_LEADER_OR_FOLLOWER");
  EXPECT_EQ(to_int16(ErrorCode::kUnknownTopicOrPartition), 3);
  EXPECT_EQ(to_int16(ErrorCode::kTransactionAbortable), 120);
  EXPECT_STREQ(error_name(int16_t(-1)), "UNKNOWN_SERVER_ERROR");
  EXPECT_STREQ(error_name(int16_t(9999)), "UNKNOWN_ERROR_CODE");
}

}  // namespace
}  // namespace samsa::protocol

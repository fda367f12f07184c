// Flexible-version encodings checked against bytes written out by hand from
// Kafka's rules (compact lengths = uvarint(n + 1), a tagged-field section
// after every struct, tagged fields in ascending tag order only when
// non-default). The KafkaJS captures only cover non-flexible versions.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "protocol/codec_test_support.h"
#include "protocol/generated/api_versions.h"
#include "protocol/generated/fetch.h"
#include "protocol/generated/metadata.h"
#include "protocol/generated/produce.h"

namespace samsa::protocol::testing {
namespace {

template <typename T>
void expect_bytes(const T& m, int16_t version, const Bytes& expected) {
  EXPECT_EQ(encode_to_bytes(m, version), expected);
  T decoded;
  ByteReader r(expected);
  ASSERT_TRUE(decoded.decode(r, version));
  EXPECT_TRUE(r.at_end());
  EXPECT_TRUE(decoded == m);
}

TEST(FlexibleVectorTest, ApiVersionsResponseV3WithTaggedField) {
  ApiVersionsResponse m;
  m.api_keys.push_back({.api_key = 18, .min_version = 0, .max_version = 4});
  m.throttle_time_ms = 7;
  m.finalized_features_epoch = 5;  // tag 1, int64
  expect_bytes(m, 3,
               {0, 0,                          // error_code
                2,                             // compact array: 1 element
                0, 18, 0, 0, 0, 4, 0,          // key, min, max, element tags
                0, 0, 0, 7,                    // throttle_time_ms
                1,                             // one tagged field
                1, 8, 0, 0, 0, 0, 0, 0, 0, 5}); // tag 1, size 8, int64 5
}

TEST(FlexibleVectorTest, MetadataRequestV12NullableCompacts) {
  MetadataRequest m;
  m.topics.emplace();
  m.topics->push_back({});
  m.topics->back().name = std::nullopt;  // nullable from v10
  m.topics->back().topic_id.bytes[15] = 9;
  m.allow_auto_topic_creation = false;
  m.include_topic_authorized_operations = true;
  Bytes expected = {2};  // compact array, 1 element
  for (int i = 0; i < 15; ++i) expected.push_back(0);
  expected.push_back(9);  // topic_id
  expected.insert(expected.end(), {0, 0, 0, 1, 0});  // name null, element tags, flags, tags
  expect_bytes(m, 12, expected);
  m.topics.reset();  // null array: compact 0
  expect_bytes(m, 12, Bytes{0, 0, 1, 0});
}

TEST(FlexibleVectorTest, FetchResponseV12PartitionTaggedStruct) {
  FetchResponse m;
  m.responses.push_back({});
  m.responses[0].topic = "t";
  auto& p = m.responses[0].partitions.emplace_back();
  p.partition_index = 1;
  p.high_watermark = 2;
  p.current_leader.leader_id = 3;  // tag 1: non-default => written
  p.current_leader.leader_epoch = 4;
  p.aborted_transactions = std::nullopt;
  p.records = RecordSet::owned(Bytes{0xaa, 0xbb});
  expect_bytes(m, 12,
               {0, 0, 0, 0,  0, 0,  0, 0, 0, 0,  // throttle, error, session id
                2, 2, 't',                       // responses[1], topic "t"
                2,                               // partitions[1]
                0, 0, 0, 1, 0, 0,                // index, error
                0, 0, 0, 0, 0, 0, 0, 2,          // high watermark
                0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,  // last stable offset -1
                0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,  // log start offset -1
                0,                               // aborted transactions: null
                0xff, 0xff, 0xff, 0xff,          // preferred read replica -1
                3, 0xaa, 0xbb,                   // records, compact length 2+1
                1, 1, 9, 0, 0, 0, 3, 0, 0, 0, 4, 0,  // tags: [1] size 9 {3, 4, no tags}
                0,                               // topic tags
                0});                             // top-level tags
}

// Kafka 4.1's ProduceRequest v13 (KIP-516): the topic entry is its id (16
// bytes) in place of its name; v12 still carries the name.
TEST(FlexibleVectorTest, ProduceRequestV13NamesTopicsById) {
  ProduceRequest m;
  m.acks = -1;
  m.timeout_ms = 1000;
  m.topic_data.push_back({});
  m.topic_data[0].name = "t";
  m.topic_data[0].topic_id.bytes[0] = 7;
  m.topic_data[0].partition_data.push_back({});
  m.topic_data[0].partition_data[0].index = 2;
  Bytes head = {0, 0xff, 0xff, 0, 0, 0x03, 0xe8, 2};  // null txn id, acks, timeout, 1 topic
  Bytes tail = {2, 0, 0, 0, 2, 0, 0, 0, 0};  // 1 partition: index, null records, tags x3
  Bytes v13 = head;
  v13.push_back(7);
  v13.insert(v13.end(), 15, 0);
  v13.insert(v13.end(), tail.begin(), tail.end());
  EXPECT_EQ(encode_to_bytes(m, 13), v13);
  Bytes v12 = head;
  v12.insert(v12.end(), {2, 't'});
  v12.insert(v12.end(), tail.begin(), tail.end());
  EXPECT_EQ(encode_to_bytes(m, 12), v12);
  ProduceRequest decoded;
  ByteReader r(v13);
  ASSERT_TRUE(decoded.decode(r, 13));
  EXPECT_TRUE(r.at_end());
  EXPECT_EQ(decoded.topic_data[0].topic_id, m.topic_data[0].topic_id);
  EXPECT_EQ(decoded.topic_data[0].name, "");
}

// MetadataResponse v13 (KIP-1102) ends with a top-level error code.
TEST(FlexibleVectorTest, MetadataResponseV13TopLevelErrorCode) {
  MetadataResponse m;
  m.controller_id = 1;
  m.error_code = 3;
  Bytes v12 = {0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1};  // throttle, brokers, cluster id null, controller, topics
  Bytes v13 = v12;
  v13.insert(v13.end(), {0, 3});
  v12.push_back(0);  // tags
  v13.push_back(0);
  expect_bytes(m, 13, v13);
  EXPECT_EQ(encode_to_bytes(m, 12), v12);  // absent before v13
}

// FetchRequest v18 (KIP-1166): a partition's HighWatermark is tag 1,
// written only when not its default (INT64_MAX, "not supported").
TEST(FlexibleVectorTest, FetchRequestV18HighWatermarkTag) {
  FetchRequest m;
  m.topics.push_back({});
  m.topics[0].partitions.push_back({});
  auto& p = m.topics[0].partitions[0];
  p.high_watermark = 5;
  Bytes bytes = encode_to_bytes(m, 18);
  FetchRequest decoded;
  ByteReader r(bytes);
  ASSERT_TRUE(decoded.decode(r, 18));
  EXPECT_TRUE(r.at_end());
  EXPECT_EQ(decoded.topics[0].partitions[0].high_watermark, 5);
  Bytes tag = {1, 1, 8, 0, 0, 0, 0, 0, 0, 0, 5};  // one tag: 1, size 8, int64 5
  EXPECT_NE(std::search(bytes.begin(), bytes.end(), tag.begin(), tag.end()), bytes.end());
  FetchRequest::FetchPartition fresh;
  EXPECT_EQ(fresh.high_watermark, INT64_MAX);
  p.high_watermark = INT64_MAX;
  EXPECT_EQ(encode_to_bytes(m, 18), encode_to_bytes(m, 17));  // the default is not written
}

}  // namespace
}  // namespace samsa::protocol::testing

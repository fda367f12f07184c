#include "group/offsets_record.h"

#include <gtest/gtest.h>

namespace samsa::group {
namespace {

Bytes b(std::initializer_list<int> v) {
  Bytes out;
  for (int x : v) out.push_back(uint8_t(x));
  return out;
}

TEST(OffsetsRecord, OffsetKeyIsV1Bytes) {
  OffsetsRecord r = OffsetRecord{OffsetKey{"g", "tp", 7}, std::nullopt};
  // i16 1 | STRING "g" | STRING "tp" | i32 7
  EXPECT_EQ(encode_key(r), b({0, 1, 0, 1, 'g', 0, 2, 't', 'p', 0, 0, 0, 7}));
  EXPECT_FALSE(encode_value(r).has_value());  // tombstone
}

TEST(OffsetsRecord, OffsetValueIsV3Bytes) {
  protocol::OffsetCommitValue v;
  v.offset = 0x0102;
  v.leader_epoch = 5;
  v.metadata = "m";
  v.commit_timestamp = 0x10;
  v.expire_timestamp = -1;
  OffsetsRecord r = OffsetRecord{OffsetKey{"g", "t", 0}, v};
  // i16 3 | i64 offset | i32 leaderEpoch | STRING metadata | i64 commitTimestamp
  EXPECT_EQ(*encode_value(r), b({0, 3, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 5, 0, 1, 'm', 0, 0, 0, 0, 0, 0, 0, 0x10}));
}

TEST(OffsetsRecord, OffsetValueWithExpiryIsV1Bytes) {
  protocol::OffsetCommitValue v;
  v.offset = 1;
  v.leader_epoch = 9;  // v1 has no leader epoch
  v.metadata = "";
  v.commit_timestamp = 2;
  v.expire_timestamp = 3;
  OffsetsRecord r = OffsetRecord{OffsetKey{"g", "t", 0}, v};
  // i16 1 | i64 offset | STRING metadata | i64 commit | i64 expire
  EXPECT_EQ(*encode_value(r), b({0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3}));
}

TEST(OffsetsRecord, GroupKeyAndValueAreV2AndV3Bytes) {
  protocol::GroupMetadataValue v;
  v.protocol_type = "consumer";
  v.generation = 2;
  v.protocol = "range";
  v.leader = "m";
  v.current_state_timestamp = 4;
  protocol::GroupMetadataValue::MemberMetadata m;
  m.member_id = "m";
  m.group_instance_id = std::nullopt;
  m.client_id = "c";
  m.client_host = "/h";
  m.rebalance_timeout = 300;
  m.session_timeout = 10;
  m.subscription = b({0xaa});
  m.assignment = b({});
  v.members.push_back(m);
  OffsetsRecord r = GroupRecord{GroupKey{"grp"}, v};
  EXPECT_EQ(encode_key(r), b({0, 2, 0, 3, 'g', 'r', 'p'}));
  Bytes expected = b({0, 3,                                               // version
                      0, 8, 'c', 'o', 'n', 's', 'u', 'm', 'e', 'r',       // protocolType
                      0, 0, 0, 2,                                         // generation
                      0, 5, 'r', 'a', 'n', 'g', 'e',                      // protocol
                      0, 1, 'm',                                          // leader
                      0, 0, 0, 0, 0, 0, 0, 4,                             // currentStateTimestamp
                      0, 0, 0, 1,                                         // members
                      0, 1, 'm',                                          // memberId
                      0xff, 0xff,                                         // groupInstanceId null
                      0, 1, 'c',                                          // clientId
                      0, 2, '/', 'h',                                     // clientHost
                      0, 0, 0x01, 0x2c,                                   // rebalanceTimeout
                      0, 0, 0, 10,                                        // sessionTimeout
                      0, 0, 0, 1, 0xaa,                                   // subscription
                      0, 0, 0, 0});                                       // assignment
  EXPECT_EQ(*encode_value(r), expected);

  // A static member's instance id follows its member id.
  std::get<GroupRecord>(r).value->members[0].group_instance_id = "i";
  Bytes with_instance = *encode_value(r);
  ASSERT_EQ(with_instance.size(), expected.size() + 1);
  // clientId 3 + clientHost 4 + timeouts 8 + subscription 5 + assignment 4
  size_t instance_at = with_instance.size() - 24 - 3;
  EXPECT_EQ(Bytes(with_instance.begin() + instance_at, with_instance.begin() + instance_at + 3), b({0, 1, 'i'}));
  auto decoded = decode_record(encode_key(r), ByteView(with_instance));
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(std::get<GroupRecord>(*decoded).value->members[0].group_instance_id, "i");
}

TEST(OffsetsRecord, RoundTripsAndSkipsUnknownKeys) {
  protocol::OffsetCommitValue v;
  v.offset = 42;
  v.metadata = "x";
  v.commit_timestamp = 7;
  OffsetsRecord r = OffsetRecord{OffsetKey{"g", "t", 3}, v};
  Bytes key = encode_key(r);
  Bytes value = *encode_value(r);
  auto decoded = decode_record(key, ByteView(value));
  ASSERT_TRUE(decoded.has_value());
  auto* o = std::get_if<OffsetRecord>(&*decoded);
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->key, (OffsetKey{"g", "t", 3}));
  EXPECT_EQ(o->value->offset, 42);
  EXPECT_EQ(o->value->metadata, "x");
  auto tomb = decode_record(key, std::nullopt);
  ASSERT_TRUE(tomb.has_value());
  EXPECT_FALSE(std::get<OffsetRecord>(*tomb).value.has_value());
  EXPECT_FALSE(decode_record(b({0, 5, 0, 1, 'g'}), std::nullopt).has_value());  // KIP-848 key
  EXPECT_FALSE(decode_record(b({0, 1, 0, 9}), std::nullopt).has_value());       // truncated
}

TEST(OffsetsRecord, PartitionForMatchesKafka) {
  EXPECT_EQ(java_string_hash("my-group"), -1906497762);
  EXPECT_EQ(java_string_hash("test-consumer-group"), -1793216381);
  EXPECT_EQ(java_string_hash("burrow"), -1377749253);
  EXPECT_EQ(java_string_hash("groupé"), -1237460406);
  EXPECT_EQ(partition_for("", 50), 0);
  EXPECT_EQ(partition_for("my-group", 50), 12);
  EXPECT_EQ(partition_for("test-consumer-group", 50), 31);
  EXPECT_EQ(partition_for("burrow", 50), 3);
  EXPECT_EQ(partition_for("groupé", 50), 6);
  EXPECT_EQ(partition_for("\xF0\x9F\x98\x80", 50), 49);
}

}  // namespace
}  // namespace samsa::group

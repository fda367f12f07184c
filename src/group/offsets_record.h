#pragma once
// OffsetsRecord: the key/value records of __consumer_offsets, in Kafka's
// exact byte formats (docs/groups.md; Kafka's GroupMetadataManager):
//
//   key   = i16 version | OffsetCommitKey v1  (group, topic, partition)
//         | i16 version | GroupMetadataKey v2 (group)
//   value = i16 version | OffsetCommitValue v3 (v1 when an expire timestamp
//           is set) | GroupMetadataValue v3 | null (tombstone)
//
// Readers accept every version Kafka wrote (offset values 0-4, group values
// 0-4) and skip unknown key versions (KIP-848 records) as Kafka does.
// Also partition_for(): which __consumer_offsets partition holds a group.

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "base/bytes.h"
#include "protocol/generated/group_metadata_value.h"
#include "protocol/generated/offset_commit_value.h"

namespace samsa::group {

struct OffsetKey {
  std::string group;
  std::string topic;
  int32_t partition = 0;
  bool operator==(const OffsetKey&) const = default;
};

struct GroupKey {
  std::string group;
  bool operator==(const GroupKey&) const = default;
};

// One record of __consumer_offsets. A null value is a tombstone.
struct OffsetRecord {
  OffsetKey key;
  std::optional<protocol::OffsetCommitValue> value;
};
struct GroupRecord {
  GroupKey key;
  std::optional<protocol::GroupMetadataValue> value;
};
using OffsetsRecord = std::variant<OffsetRecord, GroupRecord>;

// Encodes key and value bytes (value nullopt = tombstone).
Bytes encode_key(const OffsetsRecord& record);
std::optional<Bytes> encode_value(const OffsetsRecord& record);

// Decodes one record; nullopt for an unknown key version or malformed bytes
// (callers log and skip it, like Kafka's loader).
std::optional<OffsetsRecord> decode_record(ByteView key, std::optional<ByteView> value);

// Kafka's placement: Utils.abs(groupId.hashCode()) % partitions, where
// hashCode is Java's String.hashCode over UTF-16 code units.
int32_t java_string_hash(std::string_view utf8);
int32_t partition_for(std::string_view group_id, int32_t partitions);

}  // namespace samsa::group

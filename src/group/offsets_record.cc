#include "group/offsets_record.h"

#include "base/byte_reader.h"
#include "base/out_buffer.h"
#include "protocol/codec.h"
#include "protocol/generated/group_metadata_key.h"
#include "protocol/generated/offset_commit_key.h"

namespace samsa::group {
namespace {

// Versions Kafka writes (MetadataVersion offsetCommitValueVersion /
// groupMetadataValueVersion), which Burrow reads.
constexpr int16_t kOffsetKeyVersion = 1;
constexpr int16_t kGroupKeyVersion = 2;
constexpr int16_t kOffsetValueVersion = 3;
constexpr int16_t kOffsetValueWithExpiryVersion = 1;
constexpr int16_t kGroupValueVersion = 3;

template <typename T>
Bytes encode_versioned(const T& body, int16_t version) {
  OutBuffer out;
  protocol::Encoder w(out);
  w.write_i16(version);
  body.encode(w, version);
  return std::move(out.bytes());
}

template <typename T>
bool decode_versioned(ByteReader& r, int16_t version, T& out) {
  if (version < T::kMinVersion || version > T::kMaxVersion) return false;
  return out.decode(r, version) && r.ok();
}

std::optional<OffsetsRecord> decode_offset(ByteReader& kr, int16_t version, std::optional<ByteView> value) {
  protocol::OffsetCommitKey key;
  if (!decode_versioned(kr, version, key)) return std::nullopt;
  OffsetRecord record{OffsetKey{key.group, key.topic, key.partition}, std::nullopt};
  if (value && !value->empty()) {
    ByteReader vr(*value);
    int16_t value_version = vr.read_i16();
    protocol::OffsetCommitValue decoded;
    if (!vr.ok() || !decode_versioned(vr, value_version, decoded)) return std::nullopt;
    record.value = std::move(decoded);
  }
  return record;
}

std::optional<OffsetsRecord> decode_group(ByteReader& kr, int16_t version, std::optional<ByteView> value) {
  protocol::GroupMetadataKey key;
  if (!decode_versioned(kr, version, key)) return std::nullopt;
  GroupRecord record{GroupKey{key.group}, std::nullopt};
  if (value && !value->empty()) {
    ByteReader vr(*value);
    int16_t value_version = vr.read_i16();
    protocol::GroupMetadataValue decoded;
    if (!vr.ok() || !decode_versioned(vr, value_version, decoded)) return std::nullopt;
    record.value = std::move(decoded);
  }
  return record;
}

}  // namespace

Bytes encode_key(const OffsetsRecord& record) {
  if (const auto* o = std::get_if<OffsetRecord>(&record)) {
    protocol::OffsetCommitKey key;
    key.group = o->key.group;
    key.topic = o->key.topic;
    key.partition = o->key.partition;
    return encode_versioned(key, kOffsetKeyVersion);
  }
  protocol::GroupMetadataKey key;
  key.group = std::get<GroupRecord>(record).key.group;
  return encode_versioned(key, kGroupKeyVersion);
}

std::optional<Bytes> encode_value(const OffsetsRecord& record) {
  if (const auto* o = std::get_if<OffsetRecord>(&record)) {
    if (!o->value) return std::nullopt;
    int16_t version = o->value->expire_timestamp >= 0 ? kOffsetValueWithExpiryVersion : kOffsetValueVersion;
    return encode_versioned(*o->value, version);
  }
  const auto& g = std::get<GroupRecord>(record);
  if (!g.value) return std::nullopt;
  return encode_versioned(*g.value, kGroupValueVersion);
}

std::optional<OffsetsRecord> decode_record(ByteView key, std::optional<ByteView> value) {
  ByteReader kr(key);
  int16_t version = kr.read_i16();
  if (!kr.ok()) return std::nullopt;
  if (version == 0 || version == 1) return decode_offset(kr, version, value);
  if (version == 2) return decode_group(kr, version, value);
  return std::nullopt;  // KIP-848 and later record types: not ours to read
}

int32_t java_string_hash(std::string_view utf8) {
  uint32_t h = 0;
  auto mix = [&h](uint32_t unit) { h = 31 * h + unit; };
  size_t i = 0;
  while (i < utf8.size()) {
    uint8_t c = uint8_t(utf8[i]);
    uint32_t cp;
    size_t len;
    if (c < 0x80) {
      cp = c, len = 1;
    } else if ((c >> 5) == 0x6) {
      cp = c & 0x1f, len = 2;
    } else if ((c >> 4) == 0xe) {
      cp = c & 0x0f, len = 3;
    } else if ((c >> 3) == 0x1e) {
      cp = c & 0x07, len = 4;
    } else {
      cp = 0xfffd, len = 1;  // invalid byte: Java decodes it as U+FFFD
    }
    if (i + len > utf8.size()) {
      cp = 0xfffd, len = utf8.size() - i;
    } else {
      for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (uint8_t(utf8[i + k]) & 0x3f);
    }
    i += len;
    if (cp >= 0x10000) {  // a surrogate pair in UTF-16
      cp -= 0x10000;
      mix(0xd800 + (cp >> 10));
      mix(0xdc00 + (cp & 0x3ff));
    } else {
      mix(cp);
    }
  }
  return int32_t(h);
}

int32_t partition_for(std::string_view group_id, int32_t partitions) {
  int32_t h = java_string_hash(group_id);
  // Kafka's Utils.abs: Integer.MIN_VALUE maps to 0.
  int32_t abs = h == INT32_MIN ? 0 : (h < 0 ? -h : h);
  return abs % partitions;
}

}  // namespace samsa::group

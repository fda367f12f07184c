#pragma once
// The primitives of the Kafka wire format, used by the generated message code
// (protocol/generated/*.h) and by the hand-written headers.
//
// Encoder appends to an OutBuffer; a RECORDS value that is a file region is
// spliced (sendfile later) instead of copied. The read_* functions decode
// from a ByteReader: they never throw, check every length against the bytes
// remaining before allocating, and return false on malformed input.
// `flex` selects the compact forms of flexible versions (unsigned varint of
// length + 1, 0 = null) instead of int16/int32 lengths (-1 = null).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/byte_reader.h"
#include "base/byte_writer.h"
#include "base/bytes.h"
#include "base/out_buffer.h"
#include "model/record_set.h"
#include "protocol/uuid.h"

namespace samsa::protocol {

// The value of a nullable struct field about to be decoded. Not
// optional::emplace(): clang 14 (the fuzz build) decides that a nested
// struct with default member initializers is not default-constructible
// when first asked inside its enclosing class, and remembers that answer.
template <class T>
T& emplace_fresh(std::optional<T>& slot) {
  return slot.emplace(T());
}

class Encoder {
 public:
  explicit Encoder(OutBuffer& out) : out_(out), w_(out.bytes()) {}

  OutBuffer& out() { return out_; }

  void write_bool(bool v) { w_.write_i8(v ? 1 : 0); }
  void write_i8(int8_t v) { w_.write_i8(v); }
  void write_i16(int16_t v) { w_.write_i16(v); }
  void write_i32(int32_t v) { w_.write_i32(v); }
  void write_i64(int64_t v) { w_.write_i64(v); }
  void write_u16(uint16_t v) { w_.write_i16(int16_t(v)); }
  void write_u32(uint32_t v) { w_.write_u32(v); }
  void write_f64(double v) { w_.write_f64(v); }
  void write_uvarint(uint32_t v) { w_.write_uvarint(v); }
  void write_uuid(const Uuid& v) { w_.write_bytes(v.bytes); }

  // Strings longer than 32767 bytes cannot be encoded (Kafka's limit): ASSERTs.
  void write_string(bool flex, std::string_view s);
  // Null is written as null only where `nullable`, else as "" (Kafka would
  // refuse to encode; a broker must not fail a whole response for it).
  void write_nullable_string(bool flex, const std::optional<std::string>& s, bool nullable);
  void write_bytes(bool flex, ByteView b);
  void write_nullable_bytes(bool flex, const std::optional<Bytes>& b, bool nullable);
  // A file-region record set is spliced into the OutBuffer (zero copy).
  void write_records(bool flex, const RecordSet& records, bool nullable);
  void write_array_length(bool flex, size_t n);
  // A null array; an empty one where not `nullable`.
  void write_null_array(bool flex, bool nullable);
  // One tagged field: tag, size, value bytes (the value is encoded apart
  // because its size precedes it; tagged fields are small and rare).
  void write_tagged_field(uint32_t tag, const OutBuffer& value);

 private:
  void write_length(bool flex, int32_t n, bool int16_length);

  OutBuffer& out_;
  ByteWriter w_;
};

// Kafka's decoders refuse these counts before allocating anything (Kafka
// 4.4), whatever the bytes remaining: an array of more elements, or a
// tagged-field section of more fields, is a malformed request.
inline constexpr int32_t kMaxArrayElements = 1'000'000;
inline constexpr uint32_t kMaxTaggedFields = 10'000;

bool read_string(ByteReader& r, bool flex, std::string& out);
bool read_nullable_string(ByteReader& r, bool flex, bool nullable, std::optional<std::string>& out);
bool read_bytes(ByteReader& r, bool flex, Bytes& out);
bool read_nullable_bytes(ByteReader& r, bool flex, bool nullable, std::optional<Bytes>& out);
// Borrows the bytes (zero copy): the record set points into the reader's input.
bool read_records(ByteReader& r, bool flex, bool nullable, RecordSet& out);
// An array count: -1 for null. Fails on other negative counts, on counts
// above kMaxArrayElements and on counts that cannot fit:
// count * min_element_size > bytes remaining.
bool read_array_length(ByteReader& r, bool flex, size_t min_element_size, int32_t& count);
Uuid read_uuid(ByteReader& r);
// The field count that starts a tagged-field section; fails above
// kMaxTaggedFields.
bool read_tagged_field_count(ByteReader& r, uint32_t& count);
// Skips a whole tagged-field section (used where no tags are known).
bool skip_tagged_fields(ByteReader& r);

// How many elements to reserve up front for a decoded count: the count is
// already bounded by the bytes remaining, this also bounds the memory an
// adversarial count can make us reserve per array (growth beyond it is paid
// by real elements).
inline size_t reserve_hint(int32_t count) { return count < 1024 ? size_t(count) : 1024; }

// Equal if both null, or both hold the same bytes, or the same file region.
bool records_equal(const RecordSet& a, const RecordSet& b);

}  // namespace samsa::protocol

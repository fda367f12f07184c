// Fuzz target: the __consumer_offsets record decoder (group/offsets_record.h),
// which reads every offset commit and group record when a broker becomes a
// group coordinator.
//
// Input: u16 key length, the key, byte 0/1 = the value is null (tombstone),
// then the value. Properties, beyond memory safety and bounded allocation:
// what decodes re-encodes canonically (encode(decode(encode(r))) equals
// encode(r)), and a record keeps its kind (offset or group) and key.

#include "fuzz_support.h"
#include "group/offsets_record.h"

namespace samsa::fuzz {
namespace {

struct Encoded {
  Bytes key;
  std::optional<Bytes> value;
  bool operator==(const Encoded&) const = default;
};

Encoded encode(const group::OffsetsRecord& r) { return {group::encode_key(r), group::encode_value(r)}; }

std::optional<ByteView> view(const std::optional<Bytes>& b) {
  if (!b) return std::nullopt;
  return ByteView(*b);
}

void check_offsets_record(FuzzInput in) {
  ByteView key = in.bytes(in.u16());
  const bool tombstone = in.u8() & 1;
  ByteView value = in.rest();
  auto record = group::decode_record(key, tombstone ? std::nullopt : std::optional<ByteView>(value));
  if (!record) return;
  Encoded first = encode(*record);
  auto again = group::decode_record(first.key, view(first.value));
  FUZZ_CHECK(again.has_value());
  FUZZ_CHECK(again->index() == record->index());
  FUZZ_CHECK(encode(*again) == first);
}

}  // namespace
}  // namespace samsa::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  samsa::fuzz::check_offsets_record(samsa::fuzz::FuzzInput(data, size));
  return 0;
}

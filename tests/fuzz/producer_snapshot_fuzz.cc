// Fuzz target: the producer-state snapshot decoder (storage/producer_snapshot.h),
// which reads `<offset>.snapshot` files when a partition's log opens: bytes
// from disk, maybe written by Kafka, maybe torn or damaged.
//
// Input: a mode byte, the snapshot's offset (u32), then the file. Mode bit 0
// set: the target rewrites the file's CRC to match its entries, so that the
// fuzzer reaches the entry checks behind it (a random CRC almost never
// matches); clear: the file as it is, CRC check included. Properties, beyond
// memory safety and bounded allocation:
//   - what decodes describes what the file can: at most one producer a
//     non-empty entry, at most kMaxBatches batches a producer, each batch's
//     offsets ordered and below the snapshot's offset, batches in offset order;
//   - what decodes re-encodes to bytes that decode to the same producers,
//     and re-encoding those gives the same bytes (canonical).

#include "base/crc32c.h"
#include "fuzz_support.h"
#include "storage/producer_snapshot.h"

namespace samsa::fuzz {
namespace {

constexpr size_t kCrcAt = 2;  // after the version; the CRC covers what follows it

bool same_entry(const ProducerEntry& a, const ProducerEntry& b) {
  return a.epoch == b.epoch && a.batches == b.batches && a.last_timestamp == b.last_timestamp;
}

bool same_producers(const ProducerMap& a, const ProducerMap& b) {
  if (a.size() != b.size()) return false;
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
    if (ia->first != ib->first || !same_entry(ia->second, ib->second)) return false;
  }
  return true;
}

void check_batches(const ProducerEntry& entry, Offset snapshot_offset) {
  FUZZ_CHECK(entry.batches.size() <= ProducerStateTable::kMaxBatches);
  const BatchMetadata* previous = nullptr;
  for (const BatchMetadata& b : entry.batches) {
    FUZZ_CHECK(b.first_offset.value() >= 0);
    FUZZ_CHECK(b.first_offset <= b.last_offset);
    FUZZ_CHECK(b.last_offset < snapshot_offset);
    FUZZ_CHECK(b.first_seq >= 0 && b.last_seq >= 0);
    if (previous) FUZZ_CHECK(previous->last_offset < b.first_offset);
    previous = &b;
  }
}

void check_producer_snapshot(FuzzInput in) {
  const bool fix_crc = in.u8() & 1;
  const Offset snapshot_offset(in.u32());
  ByteView rest = in.rest();
  Bytes file(rest.begin(), rest.end());
  if (fix_crc && file.size() >= kProducerSnapshotHeaderBytes) {
    uint32_t crc = crc32c(ByteView(file).subspan(kCrcAt + 4));
    store_be32(file.data() + kCrcAt, crc);
  }

  auto decoded = decode_producer_snapshot(file, snapshot_offset);
  if (!decoded.ok()) return;  // the log opens without it (replays the log instead)
  const ProducerMap& producers = decoded.value();
  size_t entries = (file.size() - kProducerSnapshotHeaderBytes) / kProducerSnapshotEntryBytes;
  FUZZ_CHECK(producers.size() <= entries);
  for (const auto& [id, entry] : producers) {
    FUZZ_CHECK(id.value() >= 0);
    check_batches(entry, snapshot_offset);
  }

  Bytes encoded = encode_producer_snapshot(producers);
  auto again = decode_producer_snapshot(encoded, snapshot_offset);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(same_producers(again.value(), producers));
  FUZZ_CHECK(encode_producer_snapshot(again.value()) == encoded);
}

}  // namespace
}  // namespace samsa::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  samsa::fuzz::check_producer_snapshot(samsa::fuzz::FuzzInput(data, size));
  return 0;
}

#include "storage/producer_snapshot.h"

#include <climits>

#include "base/assert.h"
#include "base/byte_reader.h"
#include "base/byte_writer.h"
#include "base/crc32c.h"
#include "storage/segment.h"

namespace samsa {
namespace {

constexpr size_t kCrcAt = 2;           // after the version
constexpr size_t kEntriesAt = kCrcAt + 4;  // what the CRC covers
constexpr int64_t kNoTxnFirstOffset = -1;

Error corrupt(const std::string& why) { return Error(ErrorKind::kCorrupt, "producer snapshot: " + why); }

// Kafka's DefaultRecordBatch.decrementSequence: sequences wrap at INT32_MAX.
int32_t first_sequence(int32_t last_seq, int32_t delta) {
  int64_t first = int64_t(last_seq) - delta;
  return int32_t(first < 0 ? first + int64_t(INT32_MAX) + 1 : first);
}

void write_entry(ByteWriter& w, ProducerId id, const ProducerEntry& entry, const BatchMetadata* batch) {
  w.write_i64(id.value());
  w.write_i16(entry.epoch.value());
  w.write_i32(batch ? batch->last_seq : -1);
  w.write_i64(batch ? batch->last_offset.value() : -1);
  int64_t delta = batch ? batch->last_offset - batch->first_offset : 0;
  ASSERT(delta >= 0 && delta <= INT32_MAX);  // one batch's offsets
  w.write_i32(int32_t(delta));
  w.write_i64(entry.last_timestamp);
  w.write_i32(entry.coordinator_epoch);
  w.write_i64(entry.current_txn_first_offset ? entry.current_txn_first_offset->value() : kNoTxnFirstOffset);
}

struct RawEntry {
  int64_t producer_id;
  int16_t epoch;
  int32_t last_seq;
  int64_t last_offset;
  int32_t offset_delta;
  int64_t timestamp;
  int32_t coordinator_epoch;
  int64_t txn_first_offset;
};

RawEntry read_entry(ByteReader& r) {
  RawEntry e{};
  e.producer_id = r.read_i64();
  e.epoch = r.read_i16();
  e.last_seq = r.read_i32();
  e.last_offset = r.read_i64();
  e.offset_delta = r.read_i32();
  e.timestamp = r.read_i64();
  e.coordinator_epoch = r.read_i32();
  e.txn_first_offset = r.read_i64();
  return e;
}

// One entry into `table`: a batch (applied as the log's own would be, so a
// newer epoch drops an older one's batches), or a producer without batches.
Status load_entry(const RawEntry& e, Offset snapshot_offset, ProducerStateTable& table,
                  ProducerMap& without_batches) {
  if (e.producer_id < 0) return corrupt("negative producer id");
  if (e.txn_first_offset < kNoTxnFirstOffset || (e.txn_first_offset >= 0 && Offset(e.txn_first_offset) >= snapshot_offset)) {
    return corrupt("an open transaction's first offset outside the log below the snapshot's offset");
  }
  if (e.last_offset < 0) {  // Kafka: a producer whose last entry was a transaction marker
    without_batches[ProducerId(e.producer_id)] = ProducerEntry{ProducerEpoch(e.epoch), {}, e.timestamp};
    return ok_status();
  }
  if (e.offset_delta < 0 || e.offset_delta > e.last_offset || e.last_seq < 0) return corrupt("bad batch range");
  if (Offset(e.last_offset) >= snapshot_offset) return corrupt("a batch at or above the snapshot's offset");
  // A producer's batches are disjoint ranges of the log, oldest first: a
  // batch starting at or before the last one's end is not a log's state.
  const ProducerEntry* known = table.find(ProducerId(e.producer_id));
  if (known && !known->batches.empty() && known->batches.back().last_offset.value() >= e.last_offset - e.offset_delta) {
    return corrupt("a producer's batches out of offset order or overlapping");
  }
  table.apply(ProducerBatch{ProducerId(e.producer_id), ProducerEpoch(e.epoch), first_sequence(e.last_seq, e.offset_delta),
                            e.last_seq, Offset(e.last_offset - e.offset_delta), Offset(e.last_offset), e.timestamp});
  return ok_status();
}

}  // namespace

std::filesystem::path producer_snapshot_path(const std::filesystem::path& dir, Offset offset) {
  return dir / (Segment::file_stem(offset) + std::string(kProducerSnapshotSuffix));
}

Bytes encode_producer_snapshot(const ProducerMap& producers) {
  size_t count = 0;
  for (const auto& [id, entry] : producers) count += entry.batches.empty() ? 1 : entry.batches.size();
  ASSERT(count <= size_t(INT32_MAX));
  Bytes out;
  out.reserve(kProducerSnapshotHeaderBytes + count * kProducerSnapshotEntryBytes);
  ByteWriter w(out);
  w.write_i16(kProducerSnapshotVersion);
  w.reserve(4);
  w.write_i32(int32_t(count));
  for (const auto& [id, entry] : producers) {
    if (entry.batches.empty()) write_entry(w, id, entry, nullptr);
    for (const BatchMetadata& batch : entry.batches) write_entry(w, id, entry, &batch);
  }
  w.patch_i32(kCrcAt, int32_t(crc32c(ByteView(out).subspan(kEntriesAt))));
  return out;
}

Result<ProducerMap> decode_producer_snapshot(ByteView bytes, Offset offset) {
  if (bytes.size() < kProducerSnapshotHeaderBytes) return corrupt("shorter than its header");
  if (bytes.size() > kMaxProducerSnapshotBytes) return corrupt("larger than the limit");
  ByteReader r(bytes);
  int16_t version = r.read_i16();
  uint32_t crc = r.read_u32();
  int32_t count = r.read_i32();
  if (version != kProducerSnapshotVersion) return corrupt("unknown version " + std::to_string(version));
  if (crc != crc32c(bytes.subspan(kEntriesAt))) return corrupt("CRC mismatch");
  if (count < 0 || size_t(count) != r.remaining() / kProducerSnapshotEntryBytes ||
      r.remaining() % kProducerSnapshotEntryBytes != 0) {
    return corrupt("entry count " + std::to_string(count) + " does not match " + std::to_string(r.remaining()) +
                   " bytes of entries");
  }
  ProducerStateTable table;
  ProducerMap without_batches;
  // The transaction fields of each producer's last entry (Kafka's reader
  // keeps the last entry of a producer id).
  std::map<ProducerId, std::pair<int32_t, int64_t>> txn_fields;
  for (int32_t i = 0; i < count; ++i) {
    RawEntry e = read_entry(r);
    ASSERT(r.ok());  // the count was checked against the bytes
    RETURN_IF_ERROR(load_entry(e, offset, table, without_batches));
    txn_fields[ProducerId(e.producer_id)] = {e.coordinator_epoch, e.txn_first_offset};
  }
  ProducerMap producers = table.producers();
  producers.merge(without_batches);  // a producer with batches keeps them
  for (auto& [id, entry] : producers) {
    auto [coordinator_epoch, txn_first_offset] = txn_fields.at(id);
    entry.coordinator_epoch = coordinator_epoch;
    if (txn_first_offset >= 0) entry.current_txn_first_offset = Offset(txn_first_offset);
  }
  return producers;
}

}  // namespace samsa

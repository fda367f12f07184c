#include "storage/batch_check.h"

#include "base/byte_reader.h"
#include "base/crc32c.h"
#include "model/record_batch_header.h"

namespace samsa {

namespace bl = batch_layout;

Result<BatchFrame> parse_batch_frame(ByteView header) {
  if (header.size() < bl::kHeaderSize) return Error(ErrorKind::kCorrupt, "batch header truncated");
  RecordBatchHeader h(header.data());
  if (h.batch_length() < int32_t(bl::kHeaderSize - bl::kLogOverhead)) {
    return Error(ErrorKind::kCorrupt, "batch length " + std::to_string(h.batch_length()) + " too small");
  }
  if (h.magic() != 2) return Error(ErrorKind::kCorrupt, "batch magic " + std::to_string(h.magic()) + " is not 2");
  if (h.last_offset_delta() < 0) return Error(ErrorKind::kCorrupt, "negative lastOffsetDelta");
  if (h.base_offset().value() < 0) return Error(ErrorKind::kCorrupt, "negative baseOffset");
  BatchFrame f;
  f.base_offset = h.base_offset();
  f.last_offset = h.last_offset();
  f.max_timestamp = h.max_timestamp();
  f.size = h.total_size();
  return f;
}

uint32_t stored_batch_crc(ByteView batch) { return RecordBatchHeader(batch.data()).crc(); }

uint32_t compute_batch_crc(ByteView batch) { return crc32c(batch.subspan(bl::kAttributes)); }

Status check_batch(ByteView batch) {
  ASSIGN_OR_RETURN(BatchFrame f, parse_batch_frame(batch));
  if (size_t(f.size) != batch.size()) return Error(ErrorKind::kCorrupt, "batch length does not match its bytes");
  if (stored_batch_crc(batch) != compute_batch_crc(batch)) return Error(ErrorKind::kCorrupt, "batch CRC mismatch");
  return ok_status();
}

void stamp_log_append_time(uint8_t* batch, size_t size, int64_t now_ms) {
  ASSERT(size >= bl::kHeaderSize);
  uint16_t attrs = load_be16(batch + bl::kAttributes);
  store_be16(batch + bl::kAttributes, uint16_t(attrs | uint16_t(batch_attr::kLogAppendTime)));
  store_be64(batch + bl::kMaxTimestamp, uint64_t(now_ms));
  store_be32(batch + bl::kCrc, compute_batch_crc(ByteView(batch, size)));
}

std::optional<TimestampOffset> find_timestamp_in_batch(ByteView batch, int64_t target_ms) {
  if (batch.size() < bl::kHeaderSize) return std::nullopt;
  RecordBatchHeader h(batch.data());
  if (h.max_timestamp() < target_ms) return std::nullopt;
  TimestampOffset whole{h.max_timestamp(), h.base_offset()};
  if (h.log_append_time() || h.compression() != Compression::kNone) return whole;
  // Record: length varint, attributes i8, timestampDelta varlong,
  // offsetDelta varint, then key/value/headers (skipped via length).
  ByteReader r(batch.subspan(bl::kHeaderSize));
  for (int32_t i = 0; i < h.records_count() && r.ok() && !r.at_end(); ++i) {
    int32_t length = r.read_varint();
    if (!r.ok() || length < 0 || size_t(length) > r.remaining()) break;
    ByteReader rec(r.read_bytes(size_t(length)));
    (void)rec.read_i8();
    int64_t ts = h.base_timestamp() + rec.read_varlong();
    int32_t delta = rec.read_varint();
    if (!rec.ok()) break;
    if (ts >= target_ms) return TimestampOffset{ts, h.base_offset() + delta};
  }
  return whole;  // malformed records: fall back to the batch
}

}  // namespace samsa

#include "storage/batch_check.h"

#include "model/record.h"
#include "model/record_batch_header.h"

namespace samsa {

namespace bl = batch_layout;

Result<BatchFrame> parse_batch_frame(ByteView header) {
  if (header.size() < bl::kHeaderSize) return Error(ErrorKind::kCorrupt, "batch header truncated");
  RecordBatchHeader h(header.data());
  if (h.batch_length() < kMinBatchLength) {
    return Error(ErrorKind::kCorrupt, "batch length " + std::to_string(h.batch_length()) + " too small");
  }
  if (h.magic() != 2) return Error(ErrorKind::kCorrupt, "batch magic " + std::to_string(h.magic()) + " is not 2");
  if (h.last_offset_delta() < 0) return Error(ErrorKind::kCorrupt, "negative lastOffsetDelta");
  BatchFrame f;
  f.base_offset = h.base_offset();
  f.last_offset = h.last_offset();
  f.max_timestamp = h.max_timestamp();
  f.size = h.total_size();
  return f;
}

Status check_batch(ByteView batch) {
  ValidateOptions options;
  options.from_client = false;  // stored batches may be compacted
  std::string detail;
  BatchFault fault = validate_batch(batch, options, &detail);
  if (fault != BatchFault::kNone) return Error(ErrorKind::kCorrupt, std::string(to_string(fault)) + ": " + detail);
  return ok_status();
}

std::optional<TimestampOffset> find_timestamp_in_batch(ByteView batch, int64_t target_ms) {
  if (batch.size() < bl::kHeaderSize) return std::nullopt;
  RecordBatchHeader h(batch.data());
  if (h.max_timestamp() < target_ms) return std::nullopt;
  TimestampOffset whole{h.max_timestamp(), h.base_offset()};
  if (h.log_append_time()) return whole;
  auto it = RecordIterator::open(batch);
  if (!it.ok()) return whole;
  Record r;
  while (it->next(r)) {
    if (r.timestamp(h) >= target_ms) return TimestampOffset{r.timestamp(h), r.offset(h)};
  }
  return whole;  // unreadable records: fall back to the batch
}

}  // namespace samsa

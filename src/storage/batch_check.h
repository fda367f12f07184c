#pragma once
// The few things storage needs to know about a RecordBatch, in one place so
// that they can be swapped for model/record_batch.h once it lands:
//   - its frame (size and offsets) from the 61-byte header,
//   - whether a whole batch is intact (magic 2, CRC-32C over bytes 21..end),
//   - stamping LogAppendTime (rewrites attributes/maxTimestamp and the CRC),
//   - the first record at or after a timestamp (ListOffsets by time).
// All functions take untrusted bytes: they check lengths and never throw.

#include <cstdint>
#include <optional>

#include "base/bytes.h"
#include "base/result.h"
#include "model/ids.h"

namespace samsa {

struct BatchFrame {
  Offset base_offset;
  Offset last_offset;
  int64_t max_timestamp = -1;
  int64_t size = 0;  // whole batch: batchLength + 12
};

// Reads the frame from the first kHeaderSize bytes of `header` (which may be
// longer). Fails (kCorrupt) when the header is short, the length is below a
// header's, the magic is not 2 or lastOffsetDelta is negative. The CRC is
// not checked here.
Result<BatchFrame> parse_batch_frame(ByteView header);

// Checks a whole batch (exactly frame.size bytes): frame and CRC-32C.
Status check_batch(ByteView batch);

// CRC-32C stored in a batch header / computed over bytes 21..end.
uint32_t stored_batch_crc(ByteView batch);
uint32_t compute_batch_crc(ByteView batch);

// Marks the batch as LogAppendTime with timestamp `now_ms` (attributes bit,
// maxTimestamp) and rewrites its CRC. `batch` is a whole, valid batch.
void stamp_log_append_time(uint8_t* batch, size_t size, int64_t now_ms);

struct TimestampOffset {
  int64_t timestamp = -1;
  Offset offset;
  bool operator==(const TimestampOffset&) const = default;
};

// The first record of a whole batch whose timestamp is >= `target_ms`.
// Uncompressed batches are searched record by record; for compressed ones
// (not decompressed here yet) the answer is the batch's base offset with its
// max timestamp, so a client may see a few earlier records. nullopt if the
// batch's maxTimestamp < target.
std::optional<TimestampOffset> find_timestamp_in_batch(ByteView batch, int64_t target_ms);

}  // namespace samsa

#pragma once
// The few things storage needs to know about a RecordBatch, in one place,
// built on model/record_batch.h and model/record.h:
//   - its frame (size and offsets) from the 61-byte header,
//   - whether a whole batch is intact (magic 2, CRC-32C over bytes 21..end),
//   - the first record at or after a timestamp (ListOffsets by time).
// (LogAppendTime stamping is model's stamp_log_append_time.)
// All functions take untrusted bytes: they check lengths and never throw.

#include <cstdint>
#include <optional>

#include "base/bytes.h"
#include "base/result.h"
#include "model/ids.h"
#include "model/record_batch.h"

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

struct TimestampOffset {
  int64_t timestamp = -1;
  Offset offset;
  bool operator==(const TimestampOffset&) const = default;
};

// The first record of a whole batch whose timestamp is >= `target_ms`
// (compressed batches are decompressed). LogAppendTime batches answer with
// their base offset and maxTimestamp (every record has that time); a batch
// whose records cannot be read answers the same way. nullopt if the batch's
// maxTimestamp < target.
std::optional<TimestampOffset> find_timestamp_in_batch(ByteView batch, int64_t target_ms);

}  // namespace samsa

#pragma once
// Whole RecordBatch (magic v2) checks over untrusted bytes: the validation a
// broker runs on a producer's RECORDS field, the cheap walk over batch
// boundaries used by fetch and log recovery, and the LogAppendTime stamp.
//
// Hot path: shallow validation is header checks plus one CRC-32C pass per
// batch; it allocates nothing per record (one vector of per-batch facts per
// call). Deep validation additionally walks every record once, in place
// (decompressing first if needed), checking its framing as Kafka's
// LogValidator does; it allocates nothing per record either. Produce asks
// for it on every batch: a batch whose CRC is right but whose records are
// not would otherwise be stored and stop every consumer at it.
// docs/formats/record-batch.md has the layout.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "model/compression.h"
#include "model/ids.h"
#include "model/record_batch_header.h"

namespace samsa {

// Smallest legal batchLength: a header with no records (61 - 12).
inline constexpr int32_t kMinBatchLength = int32_t(batch_layout::kHeaderSize - batch_layout::kLogOverhead);

// Why a batch was refused. kafka_error_code() gives the code a Produce
// response carries (Errors.java numbering; protocol/ owns the enum).
enum class BatchFault : uint8_t {
  kNone = 0,
  kTruncated,               // buffer ends inside a batch                  CORRUPT_MESSAGE (2)
  kBadLength,               // batchLength < 49 or absurd                   CORRUPT_MESSAGE (2)
  kBadMagic,                // magic != 2 (legacy in a v2-only place)       INVALID_RECORD (87)
  kBadCrc,                  // CRC-32C mismatch                             CORRUPT_MESSAGE (2)
  kBadOffsetRange,          // lastOffsetDelta/recordsCount inconsistent    INVALID_RECORD (87)
  kBadProducerFields,       // transactional without producer id, etc.      INVALID_RECORD (87)
  kControlFromClient,       // control batch in a client produce            INVALID_RECORD (87)
  kUnsupportedCompression,  // codec id 5..7                                UNSUPPORTED_COMPRESSION_TYPE (76)
  kBadCompressedData,       // the records blob does not decompress         CORRUPT_MESSAGE (2)
  kDecompressedTooLarge,    // decompressed beyond the configured bound     MESSAGE_TOO_LARGE (10)
  kBadRecord,               // a record is malformed / deltas out of order  INVALID_RECORD (87)
  kBadTimestamp,            // outside message.timestamp.before/after.max.ms INVALID_TIMESTAMP (32)
};

const char* to_string(BatchFault fault);
int16_t kafka_error_code(BatchFault fault);

// Kafka's LogValidator.validateTimestamp, applied to every record by a deep
// check: under CreateTime a record timestamp other than -1 must lie within
// [now - before_max_ms, now + after_max_ms] (Kafka's arithmetic, so the
// defaults, Long.MAX_VALUE, accept any timestamp, negative ones included);
// under LogAppendTime a producer may not send a LogAppendTime batch.
struct TimestampPolicy {
  bool log_append_time = false;  // the topic's message.timestamp.type
  int64_t now_ms = 0;            // the broker's wall clock
  int64_t before_max_ms = INT64_MAX;
  int64_t after_max_ms = INT64_MAX;
};

struct ValidateOptions {
  // Parse every record (decompressing if needed): record length, the
  // varints, key/value lengths, header count and every header, nothing left
  // inside a record, offset deltas 0..n-1 in order, exactly recordsCount
  // records and no bytes after the last.
  bool deep = false;
  // Deep-check compressed batches even when `deep` is false (Kafka always
  // looks inside compressed batches from clients).
  bool deep_if_compressed = false;
  // Produce from a client: refuse control batches, require recordsCount >= 1
  // and lastOffsetDelta == recordsCount - 1. Off for replication/recovery,
  // where compacted batches may have gaps or no records.
  bool from_client = true;
  // Bound on the decompressed output of all the batches of one
  // validate_records call together (the produce path passes what is left
  // of the request's budget). Decompression stops at it.
  size_t max_decompressed_bytes = kDefaultMaxDecompressedBytes;
  // Checked on every record when set (deep checks only).
  std::optional<TimestampPolicy> timestamps;
};

// Facts of one valid batch, read from its header.
struct BatchInfo {
  size_t position = 0;  // byte offset of the batch in the validated buffer
  size_t size = 0;      // whole batch, batchLength + 12
  int32_t last_offset_delta = 0;
  int32_t records_count = 0;
  int64_t base_timestamp = 0;
  int64_t max_timestamp = 0;
  Compression compression = Compression::kNone;
  bool transactional = false;
  bool control = false;
  ProducerId producer_id{-1};
  ProducerEpoch producer_epoch{-1};
  int32_t base_sequence = -1;
};

struct RecordsSummary {
  std::vector<BatchInfo> batches;
  int64_t record_count = 0;      // sum of recordsCount
  int64_t offset_count = 0;      // offsets the set consumes: sum of (lastOffsetDelta + 1)
  int64_t max_timestamp = -1;    // over batch maxTimestamp fields
  // Offset (relative to the first offset of the set) of the last record of the
  // batch holding max_timestamp, like Kafka's shallowOffsetOfMaxTimestamp.
  int64_t offset_of_max_timestamp = -1;
  size_t total_bytes = 0;
};

struct RecordsValidation {
  BatchFault fault = BatchFault::kNone;
  int32_t failed_batch = -1;  // index of the refused batch
  std::string detail;         // for logs; empty when ok
  RecordsSummary summary;     // complete only when ok()
  size_t decompressed_bytes = 0;  // decompression output produced, also when refused

  bool ok() const { return fault == BatchFault::kNone; }
  int16_t kafka_error_code() const { return samsa::kafka_error_code(fault); }
};

// Validates a RECORDS buffer of v2 batches back to back (at least one batch;
// no partial batch at the end).
RecordsValidation validate_records(ByteView records, const ValidateOptions& options = {});

// Validates one whole batch (exactly `batch.size()` bytes). Fills *detail on
// failure when given.
BatchFault validate_batch(ByteView batch, const ValidateOptions& options = {}, std::string* detail = nullptr);

// CRC-32C of the CRC-covered region (attributes .. end) of a whole batch.
uint32_t compute_batch_crc(ByteView batch);

// One complete batch found by BatchIterator.
struct BatchRef {
  ByteView bytes;            // whole batch
  RecordBatchHeader header;  // view into bytes
  size_t position;           // offset of the batch in the iterated buffer
};

// Walks batch boundaries of a buffer that may end with a partial batch
// (fetch responses, a log segment after a crash). It only reads headers:
// no CRC, no records. It stops at the first partial batch (truncated()),
// or at bytes that cannot be a v2 batch (malformed(): batchLength < 49 or
// magic != 2), leaving position() at the end of the last complete batch.
class BatchIterator {
 public:
  explicit BatchIterator(ByteView buffer) : buffer_(buffer) {}

  std::optional<BatchRef> next();
  size_t position() const { return pos_; }
  bool truncated() const { return stop_ == Stop::kTruncated; }
  bool malformed() const { return stop_ == Stop::kMalformed; }
  bool at_end() const { return stop_ == Stop::kEnd; }

 private:
  enum class Stop { kNone, kEnd, kTruncated, kMalformed };
  ByteView buffer_;
  size_t pos_ = 0;
  Stop stop_ = Stop::kNone;
};

// Sets LogAppendTime on a whole, valid batch in place, as Kafka's
// DefaultRecordBatch.setMaxTimestamp: attributes get the timestamp-type bit,
// maxTimestamp = `now_ms`, the CRC is recomputed. baseTimestamp and the record
// deltas are left alone (consumers read maxTimestamp for LogAppendTime).
void stamp_log_append_time(uint8_t* batch, size_t size, int64_t now_ms);

}  // namespace samsa

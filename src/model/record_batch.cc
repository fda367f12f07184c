#include "model/record_batch.h"

#include <string>

#include "base/crc32c.h"
#include "model/record.h"
#include "model/record_stream.h"

namespace samsa {

const char* to_string(BatchFault fault) {
  switch (fault) {
    case BatchFault::kNone: return "none";
    case BatchFault::kTruncated: return "truncated batch";
    case BatchFault::kBadLength: return "bad batch length";
    case BatchFault::kBadMagic: return "bad magic";
    case BatchFault::kBadCrc: return "CRC mismatch";
    case BatchFault::kBadOffsetRange: return "inconsistent offset range and record count";
    case BatchFault::kBadProducerFields: return "bad producer id/epoch/sequence";
    case BatchFault::kControlFromClient: return "control batch from a client";
    case BatchFault::kUnsupportedCompression: return "unsupported compression";
    case BatchFault::kBadCompressedData: return "records do not decompress";
    case BatchFault::kDecompressedTooLarge: return "decompressed records too large";
    case BatchFault::kBadRecord: return "malformed record";
    case BatchFault::kBadTimestamp: return "invalid timestamp";
  }
  return "unknown";
}

int16_t kafka_error_code(BatchFault fault) {
  constexpr int16_t kNoError = 0, kCorruptMessage = 2, kMessageTooLarge = 10, kInvalidTimestamp = 32,
                    kInvalidRecord = 87,
                    kUnsupportedCompressionType = 76;
  switch (fault) {
    case BatchFault::kNone: return kNoError;
    case BatchFault::kTruncated:
    case BatchFault::kBadLength:
    case BatchFault::kBadCrc:
    case BatchFault::kBadCompressedData: return kCorruptMessage;
    // Kafka has no such bound; its error for a batch larger than the broker
    // accepts is MESSAGE_TOO_LARGE, on which the Java producer splits the
    // batch and retries (CORRUPT_MESSAGE would be retried as is, for ever).
    case BatchFault::kDecompressedTooLarge: return kMessageTooLarge;
    case BatchFault::kBadMagic:
    case BatchFault::kBadOffsetRange:
    case BatchFault::kBadProducerFields:
    case BatchFault::kControlFromClient:
    case BatchFault::kBadRecord: return kInvalidRecord;
    case BatchFault::kUnsupportedCompression: return kUnsupportedCompressionType;
    case BatchFault::kBadTimestamp: return kInvalidTimestamp;
  }
  return kCorruptMessage;
}

uint32_t compute_batch_crc(ByteView batch) {
  ASSERT(batch.size() >= batch_layout::kHeaderSize);
  return crc32c(batch.subspan(batch_layout::kAttributes));
}

namespace {

BatchFault fail(BatchFault fault, std::string* detail, std::string why) {
  if (detail) *detail = std::move(why);
  return fault;
}

BatchFault check_counts(const RecordBatchHeader& h, const ValidateOptions& options, std::string* detail) {
  int32_t count = h.records_count();
  int32_t last = h.last_offset_delta();
  if (options.from_client) {
    // LogValidator.validateBatch: offsets must cover exactly the records.
    if (count < 1 || last < 0 || int64_t(last) + 1 != count)
      return fail(BatchFault::kBadOffsetRange, detail,
                  "recordsCount " + std::to_string(count) + ", lastOffsetDelta " + std::to_string(last));
  } else if (count < 0 || int64_t(last) + 1 < count) {
    // Compaction may leave gaps (count < last + 1) or empty batches.
    return fail(BatchFault::kBadOffsetRange, detail,
                "recordsCount " + std::to_string(count) + ", lastOffsetDelta " + std::to_string(last));
  }
  return BatchFault::kNone;
}

BatchFault check_producer(const RecordBatchHeader& h, const ValidateOptions& options, std::string* detail) {
  if (h.is_control() && options.from_client)
    return fail(BatchFault::kControlFromClient, detail, "clients may not write control batches");
  if (h.is_transactional() && h.producer_id().value() < 0)
    return fail(BatchFault::kBadProducerFields, detail, "transactional batch without a producer id");
  if (options.from_client && h.producer_id().value() >= 0 && h.base_sequence() < 0)
    return fail(BatchFault::kBadProducerFields, detail, "idempotent batch without a base sequence");
  return BatchFault::kNone;
}

int64_t wrapping_add(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }

// LogValidator.recordHasInvalidTimestamp, with Java's wrapping long
// arithmetic (so INT64_MAX bounds never refuse anything).
bool outside_bounds(int64_t ts, const TimestampPolicy& p) {
  int64_t diff = int64_t(uint64_t(p.now_ms) - uint64_t(ts));
  int64_t negated = int64_t(uint64_t(0) - uint64_t(diff));
  return diff > p.before_max_ms || negated > p.after_max_ms;
}

BatchFault check_batch_timestamp_type(const RecordBatchHeader& h, const TimestampPolicy& p, std::string* detail) {
  // Kafka: a LogAppendTime batch's records all carry maxTimestamp; under a
  // CreateTime topic that is bounds-checked like any record, under a
  // LogAppendTime topic (or with no timestamp) the producer was wrong.
  if (h.log_append_time() && (p.log_append_time || h.max_timestamp() == -1))
    return fail(BatchFault::kBadTimestamp, detail,
                "producer should not set timestamp type to LogAppendTime");
  return BatchFault::kNone;
}

BatchFault timestamp_fault(int64_t ts, int32_t index, const TimestampPolicy& p, std::string* detail) {
  // Kafka's wording; the window's ends wrap as Java's longs do.
  int64_t low = int64_t(uint64_t(p.now_ms) - uint64_t(p.before_max_ms));
  int64_t high = int64_t(uint64_t(p.now_ms) + uint64_t(p.after_max_ms));
  return fail(BatchFault::kBadTimestamp, detail,
              "Timestamp " + std::to_string(ts) + " of record " + std::to_string(index) +
                  " of the batch is out of range. The timestamp should be within [" + std::to_string(low) + ", " +
                  std::to_string(high) + "]");
}

BatchFault check_records(RecordStream& it, const ValidateOptions& options, std::string* detail);

// Records are parsed as they are decompressed (RecordStream), so a batch
// that expands beyond options.max_decompressed_bytes costs at most that much
// work. *decompressed (if given) gets the output produced, also on failure.
BatchFault deep_check(ByteView batch, const ValidateOptions& options, std::string* detail, size_t* decompressed) {
  RecordStream records(batch, options.max_decompressed_bytes);
  BatchFault f = check_records(records, options, detail);
  if (decompressed) *decompressed = records.decompressed_bytes();
  return f;
}

BatchFault check_records(RecordStream& it, const ValidateOptions& options, std::string* detail) {
  const RecordBatchHeader& h = it.header();
  const TimestampPolicy* ts_policy = options.timestamps ? &*options.timestamps : nullptr;
  if (ts_policy) {
    if (BatchFault f = check_batch_timestamp_type(h, *ts_policy, detail); f != BatchFault::kNone) return f;
    bool bounded = ts_policy->before_max_ms != INT64_MAX || ts_policy->after_max_ms != INT64_MAX;
    if (ts_policy->log_append_time || !bounded) ts_policy = nullptr;  // nothing a record can break
  }
  Record rec;
  int32_t expected_delta = 0;
  bool strict = options.from_client;  // compacted batches have gaps
  int32_t prev = -1;
  while (it.next(rec)) {
    bool in_order = strict ? rec.offset_delta == expected_delta : rec.offset_delta > prev;
    if (!in_order || rec.offset_delta > h.last_offset_delta())
      return fail(BatchFault::kBadRecord, detail, "record offset delta " + std::to_string(rec.offset_delta) +
                                                      " out of order (expected " + std::to_string(expected_delta) + ")");
    if (ts_policy) {
      int64_t ts = h.log_append_time() ? h.max_timestamp() : wrapping_add(h.base_timestamp(), rec.timestamp_delta);
      if (ts != -1 && outside_bounds(ts, *ts_policy)) return timestamp_fault(ts, expected_delta, *ts_policy, detail);
    }
    prev = rec.offset_delta;
    ++expected_delta;
  }
  Status st = it.status();
  if (!st.ok()) {
    ErrorKind kind = st.error().kind();
    BatchFault f = kind == ErrorKind::kInvalidArgument ? BatchFault::kDecompressedTooLarge
                   : kind == ErrorKind::kUnsupported   ? BatchFault::kUnsupportedCompression
                   : it.decompression_failed()         ? BatchFault::kBadCompressedData
                                                       : BatchFault::kBadRecord;
    return fail(f, detail, st.error().message());
  }
  if (it.records_left() != 0) return fail(BatchFault::kBadRecord, detail, "fewer records than recordsCount");
  return BatchFault::kNone;
}

}  // namespace

namespace {
BatchFault validate_one(ByteView batch, const ValidateOptions& options, std::string* detail, size_t* decompressed);
}  // namespace

BatchFault validate_batch(ByteView batch, const ValidateOptions& options, std::string* detail) {
  return validate_one(batch, options, detail, nullptr);
}

namespace {
BatchFault validate_one(ByteView batch, const ValidateOptions& options, std::string* detail, size_t* decompressed) {
  if (batch.size() < batch_layout::kHeaderSize)
    return fail(BatchFault::kTruncated, detail, "batch shorter than the 61-byte header");
  RecordBatchHeader h(batch.data());
  if (h.batch_length() < kMinBatchLength || size_t(h.total_size()) != batch.size())
    return fail(BatchFault::kBadLength, detail, "batchLength " + std::to_string(h.batch_length()));
  if (h.magic() != 2) return fail(BatchFault::kBadMagic, detail, "magic " + std::to_string(h.magic()));
  if (compute_batch_crc(batch) != h.crc()) return fail(BatchFault::kBadCrc, detail, "CRC-32C mismatch");
  if (!is_known_compression(int(h.compression())))
    return fail(BatchFault::kUnsupportedCompression, detail,
                "compression id " + std::to_string(int(h.compression())));
  if (BatchFault f = check_counts(h, options, detail); f != BatchFault::kNone) return f;
  if (BatchFault f = check_producer(h, options, detail); f != BatchFault::kNone) return f;
  bool compressed = h.compression() != Compression::kNone;
  if (options.deep || (compressed && options.deep_if_compressed)) return deep_check(batch, options, detail, decompressed);
  return BatchFault::kNone;
}
}  // namespace

namespace {

BatchInfo info_of(const RecordBatchHeader& h, size_t position) {
  BatchInfo b;
  b.position = position;
  b.size = size_t(h.total_size());
  b.last_offset_delta = h.last_offset_delta();
  b.records_count = h.records_count();
  b.base_timestamp = h.base_timestamp();
  b.max_timestamp = h.max_timestamp();
  b.compression = h.compression();
  b.transactional = h.is_transactional();
  b.control = h.is_control();
  b.producer_id = h.producer_id();
  b.producer_epoch = h.producer_epoch();
  b.base_sequence = h.base_sequence();
  return b;
}

// Where the next batch ends, or a fault if the buffer cannot hold it.
BatchFault batch_extent(ByteView rest, size_t& size, std::string* detail) {
  if (rest.size() < batch_layout::kLogOverhead) return fail(BatchFault::kTruncated, detail, "partial batch at end");
  int32_t len = int32_t(load_be32(rest.data() + batch_layout::kBatchLength));
  if (len < kMinBatchLength) return fail(BatchFault::kBadLength, detail, "batchLength " + std::to_string(len));
  size = size_t(len) + batch_layout::kLogOverhead;
  if (size > rest.size()) return fail(BatchFault::kTruncated, detail, "batch extends past the buffer");
  return BatchFault::kNone;
}

}  // namespace

RecordsValidation validate_records(ByteView records, const ValidateOptions& options) {
  RecordsValidation v;
  if (records.empty()) {
    v.fault = BatchFault::kTruncated;
    v.failed_batch = 0;
    v.detail = "no record batch";
    return v;
  }
  RecordsSummary& s = v.summary;
  size_t pos = 0;
  while (pos < records.size()) {
    size_t size = 0;
    ByteView rest = records.subspan(pos);
    v.fault = batch_extent(rest, size, &v.detail);
    if (v.fault == BatchFault::kNone) {
      // The bound is for the whole call: each batch gets what the earlier
      // ones left.
      ValidateOptions batch_options = options;
      batch_options.max_decompressed_bytes = options.max_decompressed_bytes - v.decompressed_bytes;
      size_t used = 0;
      v.fault = validate_one(rest.first(size), batch_options, &v.detail, &used);
      v.decompressed_bytes += used;
    }
    if (v.fault != BatchFault::kNone) {
      v.failed_batch = int32_t(s.batches.size());
      return v;
    }
    RecordBatchHeader h(rest.data());
    BatchInfo info = info_of(h, pos);
    if (s.batches.empty() || info.max_timestamp > s.max_timestamp) {
      s.max_timestamp = info.max_timestamp;
      s.offset_of_max_timestamp = s.offset_count + info.last_offset_delta;
    }
    s.record_count += info.records_count;
    s.offset_count += int64_t(info.last_offset_delta) + 1;
    s.batches.push_back(info);
    pos += size;
  }
  s.total_bytes = pos;
  return v;
}

std::optional<BatchRef> BatchIterator::next() {
  if (stop_ != Stop::kNone) return std::nullopt;
  ByteView rest = buffer_.subspan(pos_);
  if (rest.empty()) {
    stop_ = Stop::kEnd;
    return std::nullopt;
  }
  size_t size = 0;
  BatchFault f = batch_extent(rest, size, nullptr);
  // A header we can see must be a v2 one, even if the body is cut off.
  if (f == BatchFault::kBadLength || (rest.size() > batch_layout::kMagic && rest[batch_layout::kMagic] != 2)) {
    stop_ = Stop::kMalformed;
    return std::nullopt;
  }
  if (f == BatchFault::kTruncated) {
    stop_ = Stop::kTruncated;
    return std::nullopt;
  }
  BatchRef ref{rest.first(size), RecordBatchHeader(rest.data()), pos_};
  pos_ += size;
  return ref;
}

void stamp_log_append_time(uint8_t* batch, size_t size, int64_t now_ms) {
  ASSERT(size >= batch_layout::kHeaderSize);
  RecordBatchHeader h(batch);
  if (h.log_append_time() && h.max_timestamp() == now_ms) return;  // CRC unchanged
  store_be16(batch + batch_layout::kAttributes, uint16_t(h.attributes() | batch_attr::kLogAppendTime));
  store_be64(batch + batch_layout::kMaxTimestamp, uint64_t(now_ms));
  store_be32(batch + batch_layout::kCrc, compute_batch_crc(ByteView(batch, size)));
}

}  // namespace samsa

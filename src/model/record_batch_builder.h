#pragma once
// RecordBatchBuilder: builds one RecordBatch v2 (magic 2) from records, with
// any codec and a correct CRC-32C. Used by tests, the CLI and benchmarks,
// up-conversion of legacy message sets, and broker-written batches (control
// markers, recompression). Not thread-safe; one builder per batch.
//
// Records are encoded as they are added (the builder copies key, value and
// headers), so the caller's buffers need not outlive add().

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "base/bytes.h"
#include "base/result.h"
#include "model/compression.h"
#include "model/ids.h"
#include "model/record.h"
#include "model/record_batch_header.h"

namespace samsa {

struct RecordBatchOptions {
  Compression compression = Compression::kNone;
  int compression_level = kDefaultCompressionLevel;
  Offset base_offset{0};  // producers send 0; the broker assigns
  LeaderEpoch partition_leader_epoch{-1};
  ProducerId producer_id{-1};
  ProducerEpoch producer_epoch{-1};
  int32_t base_sequence = -1;
  bool transactional = false;
  bool control = false;
  // LogAppendTime: set the timestamp-type bit and maxTimestamp to this;
  // records keep their own timestamps (as Kafka's MemoryRecordsBuilder).
  std::optional<int64_t> log_append_time_ms;
};

class RecordBatchBuilder {
 public:
  explicit RecordBatchBuilder(RecordBatchOptions options = {});

  // Appends a record with the next offset delta (0, 1, 2, ...).
  // `timestamp_ms` is absolute; -1 means none (legacy v0 data).
  void add(int64_t timestamp_ms, std::optional<ByteView> key, std::optional<ByteView> value,
           std::span<const RecordHeader> headers = {});
  // Appends with an explicit offset delta, which must exceed the previous
  // one (gaps are allowed: compacted data, legacy inner offsets).
  void add_with_offset_delta(int32_t offset_delta, int64_t timestamp_ms, std::optional<ByteView> key,
                             std::optional<ByteView> value, std::span<const RecordHeader> headers = {});

  int32_t record_count() const { return count_; }
  // Uncompressed size of the batch so far (header + records).
  size_t uncompressed_size() const { return batch_layout::kHeaderSize + records_.size(); }

  // Encodes the batch and appends it to `out`. Requires at least one record.
  // The builder is spent afterwards.
  Status build_to(Bytes& out);
  Result<Bytes> build();

 private:
  void encode_record(int32_t offset_delta, int64_t timestamp_delta, std::optional<ByteView> key,
                     std::optional<ByteView> value, std::span<const RecordHeader> headers);

  RecordBatchOptions options_;
  Bytes records_;  // uncompressed records section
  int32_t count_ = 0;
  int32_t last_offset_delta_ = -1;
  int64_t base_timestamp_ = -1;
  int64_t max_timestamp_ = -1;
  bool built_ = false;
};

// Convenience for tests and tools: a batch of `values` (null keys),
// timestamps base_timestamp_ms + i.
Result<Bytes> build_simple_batch(std::span<const std::string_view> values, int64_t base_timestamp_ms,
                                 RecordBatchOptions options = {});

}  // namespace samsa

#pragma once
// The 61-byte header of a RecordBatch (magic v2), read in place. Layout
// (DefaultRecordBatch.java; docs/formats/record-batch.md):
//
//   0 baseOffset i64 | 8 batchLength i32 | 12 partitionLeaderEpoch i32 |
//  16 magic i8 | 17 crc u32 (CRC-32C over bytes 21..end) | 21 attributes i16 |
//  23 lastOffsetDelta i32 | 27 baseTimestamp i64 | 35 maxTimestamp i64 |
//  43 producerId i64 | 51 producerEpoch i16 | 53 baseSequence i32 |
//  57 recordsCount i32 | 61 records...
//
// baseOffset and partitionLeaderEpoch are outside the CRC, so the broker
// assigns them by patching bytes in place. This view does no validation:
// callers check sizes first (model/record_batch.h validates whole batches).

#include <cstdint>

#include "base/assert.h"
#include "base/bytes.h"
#include "model/ids.h"

namespace samsa {

namespace batch_layout {
inline constexpr size_t kBaseOffset = 0;
inline constexpr size_t kBatchLength = 8;
inline constexpr size_t kPartitionLeaderEpoch = 12;
inline constexpr size_t kMagic = 16;
inline constexpr size_t kCrc = 17;
inline constexpr size_t kAttributes = 21;
inline constexpr size_t kLastOffsetDelta = 23;
inline constexpr size_t kBaseTimestamp = 27;
inline constexpr size_t kMaxTimestamp = 35;
inline constexpr size_t kProducerId = 43;
inline constexpr size_t kProducerEpoch = 51;
inline constexpr size_t kBaseSequence = 53;
inline constexpr size_t kRecordsCount = 57;
inline constexpr size_t kHeaderSize = 61;
// Bytes before batchLength's count starts: baseOffset + batchLength.
inline constexpr size_t kLogOverhead = 12;
// The magic byte is at the same place in legacy messages (offset 16 of an
// offset+size+crc+magic entry), which is how readers tell formats apart.
}  // namespace batch_layout

enum class Compression : int8_t { kNone = 0, kGzip = 1, kSnappy = 2, kLz4 = 3, kZstd = 4 };

namespace batch_attr {
inline constexpr int16_t kCompressionMask = 0x07;
inline constexpr int16_t kLogAppendTime = 0x08;
inline constexpr int16_t kTransactional = 0x10;
inline constexpr int16_t kControl = 0x20;
inline constexpr int16_t kDeleteHorizon = 0x40;
}  // namespace batch_attr

class RecordBatchHeader {
 public:
  // `bytes` must hold at least kHeaderSize bytes.
  explicit RecordBatchHeader(const uint8_t* bytes) : p_(bytes) {}

  Offset base_offset() const { return Offset(int64_t(load_be64(p_ + batch_layout::kBaseOffset))); }
  int32_t batch_length() const { return int32_t(load_be32(p_ + batch_layout::kBatchLength)); }
  // Whole batch size on disk/wire: batchLength + 12.
  int64_t total_size() const { return int64_t(batch_length()) + int64_t(batch_layout::kLogOverhead); }
  LeaderEpoch partition_leader_epoch() const {
    return LeaderEpoch(int32_t(load_be32(p_ + batch_layout::kPartitionLeaderEpoch)));
  }
  int8_t magic() const { return int8_t(p_[batch_layout::kMagic]); }
  uint32_t crc() const { return load_be32(p_ + batch_layout::kCrc); }
  int16_t attributes() const { return int16_t(load_be16(p_ + batch_layout::kAttributes)); }
  Compression compression() const { return Compression(attributes() & batch_attr::kCompressionMask); }
  bool is_transactional() const { return attributes() & batch_attr::kTransactional; }
  bool is_control() const { return attributes() & batch_attr::kControl; }
  bool log_append_time() const { return attributes() & batch_attr::kLogAppendTime; }
  int32_t last_offset_delta() const { return int32_t(load_be32(p_ + batch_layout::kLastOffsetDelta)); }
  Offset last_offset() const { return base_offset() + last_offset_delta(); }
  int64_t base_timestamp() const { return int64_t(load_be64(p_ + batch_layout::kBaseTimestamp)); }
  int64_t max_timestamp() const { return int64_t(load_be64(p_ + batch_layout::kMaxTimestamp)); }
  ProducerId producer_id() const { return ProducerId(int64_t(load_be64(p_ + batch_layout::kProducerId))); }
  ProducerEpoch producer_epoch() const {
    return ProducerEpoch(int16_t(load_be16(p_ + batch_layout::kProducerEpoch)));
  }
  int32_t base_sequence() const { return int32_t(load_be32(p_ + batch_layout::kBaseSequence)); }
  int32_t records_count() const { return int32_t(load_be32(p_ + batch_layout::kRecordsCount)); }

 private:
  const uint8_t* p_;
};

// In-place assignment of broker-owned fields (not covered by the CRC).
inline void set_base_offset(uint8_t* batch, Offset offset) {
  store_be64(batch + batch_layout::kBaseOffset, uint64_t(offset.value()));
}
inline void set_partition_leader_epoch(uint8_t* batch, LeaderEpoch epoch) {
  store_be32(batch + batch_layout::kPartitionLeaderEpoch, uint32_t(epoch.value()));
}

}  // namespace samsa

#pragma once
// Legacy MessageSet (magic 0 and 1), the record format of Produce v0-2 and
// Fetch v0-3 (LegacyRecord.java; docs/formats/record-batch.md#legacy):
//
//   entry   = offset i64 | messageSize i32 | message
//   message = crc u32 (CRC-32/IEEE over magic..end) | magic i8 | attributes i8 |
//             [timestamp i64, magic 1 only] | key bytes (i32 len, -1 null) |
//             value bytes (i32 len, -1 null)
//
// A compressed message ("wrapper") holds a whole inner message set, compressed,
// as its value. Inner offsets are absolute in magic 0; in magic 1 they are
// relative (0..n-1) and the wrapper carries the absolute offset of the last
// inner message.
//
// Samsa stores only v2 batches: legacy produce data is up-converted on the way
// in, and v2 batches are down-converted for old fetchers. LZ4 wrappers use
// Kafka's broken frame checksum in magic 0 (KAFKA-3160); both checksums are
// accepted on read. zstd does not exist in legacy formats.

#include <cstdint>
#include <optional>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "model/compression.h"

namespace samsa {

namespace legacy_layout {
inline constexpr size_t kLogOverhead = 12;       // offset + messageSize
inline constexpr size_t kMinMessageV0 = 14;      // crc magic attrs keyLen valueLen
inline constexpr size_t kMinMessageV1 = 22;      // + timestamp
inline constexpr int8_t kCompressionMask = 0x07;
inline constexpr int8_t kLogAppendTime = 0x08;   // magic 1 only
}  // namespace legacy_layout

// One message of a parsed set. Inner messages of compressed wrappers replace
// their wrapper, with absolute offsets and effective timestamps resolved.
struct LegacyMessage {
  int64_t offset = 0;
  int8_t magic = 0;
  int8_t attributes = 0;             // of the outermost message (codec, timestamp type)
  int64_t timestamp = -1;            // -1 in magic 0; the wrapper's for LogAppendTime
  std::optional<ByteView> key;
  std::optional<ByteView> value;
  int32_t wrapper = 0;               // index of the top-level entry it came from

  Compression compression() const { return Compression(attributes & legacy_layout::kCompressionMask); }
  bool log_append_time() const { return magic >= 1 && (attributes & legacy_layout::kLogAppendTime); }
};

struct LegacyParseOptions {
  size_t max_decompressed_bytes = kDefaultMaxDecompressedBytes;
  // Fetch responses may end with a partial message; otherwise (produce) a
  // partial tail is corrupt.
  bool allow_truncated_tail = false;
};

// A fully parsed legacy message set. Messages borrow from the input bytes
// (which must outlive this object) and from decompressed buffers it owns.
class LegacyMessageSet {
 public:
  // Checks sizes, magic (0/1), every CRC (wrappers and inner messages), and
  // decompresses wrappers. Errors: kCorrupt (bad CRC, sizes, nested
  // compression), kUnsupported (zstd or unknown codec), kInvalidArgument
  // (decompressed beyond the bound).
  static Result<LegacyMessageSet> parse(ByteView bytes, const LegacyParseOptions& options = {});

  const std::vector<LegacyMessage>& messages() const { return messages_; }
  int32_t wrapper_count() const { return wrapper_count_; }
  bool truncated_tail() const { return truncated_; }
  size_t bytes_parsed() const { return bytes_parsed_; }

 private:
  Status parse_entries(ByteView bytes, const LegacyParseOptions& options);
  Status expand_wrapper(const LegacyMessage& wrapper, const LegacyParseOptions& options);

  std::vector<LegacyMessage> messages_;
  std::vector<Bytes> buffers_;  // decompressed inner sets (moving a Bytes keeps its storage)
  int32_t wrapper_count_ = 0;
  bool truncated_ = false;
  size_t bytes_parsed_ = 0;
};

// Appends one legacy entry (offset, size, message) with its CRC.
void write_legacy_message(Bytes& out, int8_t magic, int64_t offset, int8_t attributes, int64_t timestamp,
                          std::optional<ByteView> key, std::optional<ByteView> value);

// Up-conversion (old producer -> log): one v2 batch per compressed wrapper,
// with the wrapper's codec, and one uncompressed v2 batch per run of
// uncompressed messages. Base offsets are 0 and offset deltas 0..n-1: the
// broker assigns offsets afterwards as for any produce. Timestamps: magic 0
// has none (-1); magic 1 keeps them.
Result<Bytes> upconvert_to_v2(const LegacyMessageSet& set);

struct DownconvertOptions {
  int8_t magic = 1;  // Fetch v0-1 -> 0, Fetch v2-3 -> 1
  // Write a compressed wrapper per compressed batch (gzip, snappy, lz4);
  // otherwise, and for zstd which legacy readers cannot decode, write
  // uncompressed messages.
  bool keep_compression = true;
  size_t max_decompressed_bytes = kDefaultMaxDecompressedBytes;
};

// Down-conversion (log -> old fetcher) of the complete v2 batches in
// `records`; a partial batch at the end is dropped (the fetcher would drop
// it anyway), control batches are skipped (legacy has no control records),
// headers are lost. Errors: kCorrupt for malformed batches or records.
Result<Bytes> downconvert_to_legacy(ByteView records, const DownconvertOptions& options);

}  // namespace samsa

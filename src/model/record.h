#pragma once
// Records inside a v2 batch (DefaultRecord.java; docs/formats/record-batch.md):
//
//   length varint | attributes i8 | timestampDelta varlong | offsetDelta varint |
//   keyLength varint (-1 = null) | key | valueLength varint (-1 = null) | value |
//   headerCount varint | headers: keyLength varint, key, valueLength varint, value
//
// Record and RecordHeader are views: they borrow from the batch bytes (or the
// iterator's decompressed buffer) and live no longer than those. Parsing
// never allocates, never throws, and checks every length.

#include <cstdint>
#include <optional>
#include <string_view>

#include "base/bytes.h"
#include "base/result.h"
#include "model/compression.h"
#include "model/record_batch_header.h"

namespace samsa {

struct RecordHeader {
  std::string_view key;
  std::optional<ByteView> value;  // nullopt = null
};

class RecordHeaderIterator {
 public:
  RecordHeaderIterator(ByteView headers, int32_t count) : data_(headers), left_(count) {}
  // Fills `out` and returns true, or false at the end. The bytes were
  // checked when the record was parsed, so a false here means the end.
  bool next(RecordHeader& out);

 private:
  ByteView data_;
  size_t pos_ = 0;
  int32_t left_;
};

struct Record {
  int8_t attributes = 0;
  int64_t timestamp_delta = 0;
  int32_t offset_delta = 0;
  std::optional<ByteView> key;    // nullopt = null key
  std::optional<ByteView> value;  // nullopt = tombstone
  int32_t header_count = 0;
  ByteView headers_bytes;          // the encoded headers, already bounds-checked
  size_t encoded_size = 0;         // bytes including the length prefix

  RecordHeaderIterator headers() const { return RecordHeaderIterator(headers_bytes, header_count); }
  int64_t timestamp(const RecordBatchHeader& batch) const { return batch.base_timestamp() + timestamp_delta; }
  Offset offset(const RecordBatchHeader& batch) const { return batch.base_offset() + offset_delta; }
};

// Parses one record (length prefix included) at the start of `input`.
// Returns false if it is malformed or runs past `input`; then `*why` (when
// given) names the broken field, as a static string (no allocation, so the
// produce path can check every record).
bool parse_record(ByteView input, Record& out, const char** why = nullptr);

// Iterates the records of one batch, decompressing the records section first
// if needed (into a buffer the iterator owns). Movable; records returned by
// next() stay valid while the iterator lives.
class RecordIterator {
 public:
  // `batch` starts with one whole v2 batch (header + records; bytes after
  // batchLength are ignored) and outlives the iterator. Its CRC is not
  // checked here (see validate_batch).
  static Result<RecordIterator> open(ByteView batch, size_t max_decompressed_bytes = kDefaultMaxDecompressedBytes);

  // Fills `out` and returns true; false at the end or on malformed data
  // (then status() says which record and what is wrong). Reading more
  // records than recordsCount claims, fewer (the section ends first), or
  // leaving bytes after the last one, is malformed.
  bool next(Record& out);
  Status status() const;
  const RecordBatchHeader& header() const { return header_; }
  int32_t records_left() const { return left_; }

 private:
  RecordIterator(ByteView batch, Bytes decompressed, bool compressed);

  RecordBatchHeader header_;
  Bytes decompressed_;
  ByteView records_;
  size_t pos_ = 0;
  int32_t left_ = 0;
  bool failed_ = false;
  const char* why_ = nullptr;  // what failed_ is about
};

}  // namespace samsa

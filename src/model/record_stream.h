#pragma once
// RecordStream: the records of one batch, parsed as they are decompressed;
// what validation walks (record_batch.cc, deep checks). Unlike
// RecordIterator it never holds the whole decompressed records section,
// only a read-ahead window that grows to the largest record, so a hostile
// batch that expands far beyond its size costs:
//   - memory: its largest record (never more than the bound);
//   - time: decompression up to the bound, no more; and a record whose
//     length prefix claims more than the bound is refused before its bytes
//     are decompressed (a one-record bomb costs one window).
// Uncompressed records are parsed in place, without a copy.
//
// Records returned by next() are valid until the next call. Not movable
// (the window is referenced by returned records).

#include <cstddef>
#include <cstdint>
#include <memory>

#include "base/bytes.h"
#include "base/result.h"
#include "model/compression.h"
#include "model/record.h"
#include "model/record_batch_header.h"

namespace samsa {

class RecordStream {
 public:
  // `batch` is one whole v2 batch (header + records, exactly batchLength +
  // 12 bytes) whose header the caller checked; it outlives the stream.
  // At most `max_decompressed_bytes` of decompressed output are produced.
  RecordStream(ByteView batch, size_t max_decompressed_bytes);
  RecordStream(const RecordStream&) = delete;
  RecordStream& operator=(const RecordStream&) = delete;

  // The next record; false at the end or on failure (status() says which).
  // More records than recordsCount claims, or bytes after the last one,
  // are malformed.
  bool next(Record& out);
  // ok, or: kInvalidArgument (decompressed beyond the bound), kUnsupported
  // (unknown codec), kCorrupt (the codec refused the data when
  // decompression_failed(), else a malformed record).
  Status status() const { return status_; }
  bool decompression_failed() const { return decompression_failed_; }
  int32_t records_left() const { return left_; }
  const RecordBatchHeader& header() const { return header_; }
  // Decompressed bytes produced so far (0 for an uncompressed batch).
  size_t decompressed_bytes() const { return stream_ ? stream_->produced() : 0; }

 private:
  // Makes at least `want` bytes available at window_[pos_..end_) unless the
  // data ends first; false only on a decompression error.
  bool fill(size_t want);
  size_t available() const { return end_ - pos_; }
  const uint8_t* window() const { return plain_.empty() ? buffer_.data() : plain_.data(); }
  bool malformed(std::string why);
  bool decompression_error(Error e);

  RecordBatchHeader header_;
  size_t max_;
  ByteView plain_;                            // uncompressed: the records section itself
  std::unique_ptr<DecompressStream> stream_;  // compressed
  Bytes buffer_;                              // the window over stream_'s output
  size_t pos_ = 0;
  size_t end_ = 0;
  bool eof_ = false;
  int32_t left_ = 0;
  bool done_ = false;
  bool decompression_failed_ = false;
  Status status_;
};

}  // namespace samsa

#pragma once
// BatchScanner: walks the batches of a .log file from a position, reading
// through a fixed buffer (never a whole batch at once, so a garbage length
// cannot make it allocate). Used by offset translation and reads (headers
// only) and by recovery (headers plus a streaming CRC-32C of each batch).
// One thread; the scanner borrows the File (one read_at per buffer fill).

#include <cstdint>
#include <optional>

#include "base/bytes.h"
#include "base/file.h"
#include "base/result.h"
#include "storage/batch_check.h"

namespace samsa {

struct ScannedBatch {
  int64_t position = 0;
  BatchFrame frame;
};

class BatchScanner {
 public:
  BatchScanner(const File& file, int64_t start, int64_t end, size_t buffer_bytes = 16 * 1024);

  // The batch at position() and advances past it; nullopt at `end`.
  // kCorrupt when the bytes at position() are no whole valid batch (short
  // header, length running past `end`, bad magic, bad CRC when verify_crc);
  // position() then still points at the bad batch. Other kinds: I/O errors.
  Result<std::optional<ScannedBatch>> next(bool verify_crc);

  // Steps back to `b`, the batch next() just returned (a caller that refuses
  // it, e.g. for its offsets): position() points at it again.
  void unread(const ScannedBatch& b) { pos_ = b.position; }
  int64_t position() const { return pos_; }
  // Bytes read from the file so far (recovery accounting).
  int64_t bytes_read() const { return bytes_read_; }

 private:
  // Makes [at, at+n) available in the buffer; n <= buffer size.
  Result<const uint8_t*> ensure(int64_t at, size_t n);
  Result<uint32_t> crc_of(int64_t from, int64_t to);

  const File& file_;
  int64_t pos_;
  int64_t end_;
  Bytes buf_;
  int64_t buf_start_ = 0;
  size_t buf_len_ = 0;
  int64_t bytes_read_ = 0;
};

}  // namespace samsa

#include "storage/batch_scanner.h"

#include <algorithm>

#include "base/crc32c.h"
#include "model/record_batch_header.h"

namespace samsa {

namespace bl = batch_layout;

BatchScanner::BatchScanner(const File& file, int64_t start, int64_t end, size_t buffer_bytes)
    : file_(file), pos_(start), end_(end), buf_(std::max(buffer_bytes, bl::kHeaderSize)) {}

Result<const uint8_t*> BatchScanner::ensure(int64_t at, size_t n) {
  ASSERT(n <= buf_.size());
  if (at >= buf_start_ && at + int64_t(n) <= buf_start_ + int64_t(buf_len_)) {
    return buf_.data() + (at - buf_start_);
  }
  size_t want = size_t(std::min<int64_t>(int64_t(buf_.size()), end_ - at));
  ASSIGN_OR_RETURN(size_t got, file_.read_at(buf_.data(), want, at));
  bytes_read_ += int64_t(got);
  buf_start_ = at;
  buf_len_ = got;
  if (got < n) return Error(ErrorKind::kCorrupt, "unexpected end of " + file_.path());
  return buf_.data();
}

Result<uint32_t> BatchScanner::crc_of(int64_t from, int64_t to) {
  uint32_t crc = 0;
  while (from < to) {
    size_t n = size_t(std::min<int64_t>(to - from, int64_t(buf_.size())));
    ASSIGN_OR_RETURN(const uint8_t* p, ensure(from, n));
    crc = crc32c_extend(crc, ByteView(p, n));
    from += int64_t(n);
  }
  return crc;
}

Result<std::optional<ScannedBatch>> BatchScanner::next(bool verify_crc) {
  if (pos_ >= end_) return std::optional<ScannedBatch>();
  if (end_ - pos_ < int64_t(bl::kHeaderSize)) return Error(ErrorKind::kCorrupt, "partial batch header");
  ASSIGN_OR_RETURN(const uint8_t* h, ensure(pos_, bl::kHeaderSize));
  ASSIGN_OR_RETURN(BatchFrame frame, parse_batch_frame(ByteView(h, bl::kHeaderSize)));
  if (frame.size > end_ - pos_) return Error(ErrorKind::kCorrupt, "batch runs past the end of the file");
  if (verify_crc) {
    uint32_t stored = RecordBatchHeader(h).crc();
    ASSIGN_OR_RETURN(uint32_t actual, crc_of(pos_ + int64_t(bl::kAttributes), pos_ + frame.size));
    if (stored != actual) return Error(ErrorKind::kCorrupt, "batch CRC mismatch");
  }
  ScannedBatch out{pos_, frame};
  pos_ += frame.size;
  return std::optional<ScannedBatch>(out);
}

}  // namespace samsa

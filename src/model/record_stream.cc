#include "model/record_stream.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "base/byte_reader.h"

namespace samsa {

namespace {
constexpr size_t kWindowBytes = 64 * 1024;
constexpr size_t kMaxVarintBytes = 5;
}  // namespace

RecordStream::RecordStream(ByteView batch, size_t max_decompressed_bytes)
    : header_(batch.data()), max_(max_decompressed_bytes), left_(header_.records_count()) {
  ASSERT(batch.size() >= batch_layout::kHeaderSize);
  ByteView records = batch.subspan(batch_layout::kHeaderSize);
  if (left_ < 0) {
    malformed("negative records count");
    return;
  }
  Compression codec = header_.compression();
  if (codec == Compression::kNone) {
    plain_ = records;
    end_ = records.size();
    eof_ = true;
    return;
  }
  auto stream = DecompressStream::open(codec, records, max_decompressed_bytes);
  if (!stream.ok()) {
    decompression_error(stream.error());
    return;
  }
  stream_ = std::move(stream).value();
  buffer_.resize(kWindowBytes);
}

bool RecordStream::malformed(std::string why) {
  done_ = true;
  status_ = Error(ErrorKind::kCorrupt, std::move(why));
  return false;
}

bool RecordStream::decompression_error(Error e) {
  done_ = true;
  // Beyond the bound or an unknown codec keep their kinds; anything else
  // the codec says is corrupt data.
  decompression_failed_ = e.kind() != ErrorKind::kInvalidArgument && e.kind() != ErrorKind::kUnsupported;
  status_ = decompression_failed_ ? Error(ErrorKind::kCorrupt, e.message()) : e;
  return false;
}

bool RecordStream::fill(size_t want) {
  if (available() >= want || eof_) return true;
  // Keep the unread tail, at the front; grow only for a record larger than
  // the window (its size is bounded by max_ before we get here).
  if (pos_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + pos_, available());
    end_ -= pos_;
    pos_ = 0;
  }
  if (buffer_.size() < want) buffer_.resize(std::max(want, buffer_.size() * 2));
  while (end_ < want && !eof_) {
    Result<size_t> n = stream_->read(std::span<uint8_t>(buffer_.data() + end_, buffer_.size() - end_));
    if (!n.ok()) return decompression_error(n.error());
    if (*n == 0) eof_ = true;
    end_ += *n;
  }
  return true;
}

bool RecordStream::next(Record& out) {
  if (done_) return false;
  if (left_ == 0) {
    done_ = true;
    if (!fill(1)) return false;
    if (available() > 0) return malformed("bytes left after the last record (recordsCount too small?)");
    return false;
  }
  auto where = [this] {  // for errors only: no allocation per record
    return std::to_string(header_.records_count() - left_ + 1) + " of " + std::to_string(header_.records_count());
  };
  // The wording is parse_record's and RecordIterator's (model/record.cc),
  // so a refusal reads the same whichever path found it.
  if (!fill(kMaxVarintBytes)) return false;
  if (available() == 0) return malformed("records section ends before recordsCount records (record " + where() + ")");
  ByteReader prefix(ByteView(window() + pos_, std::min(available(), kMaxVarintBytes)));
  int32_t length = prefix.read_varint();
  if (!prefix.ok() || length < 0) return malformed("bad record length (record " + where() + ")");
  size_t total = prefix.position() + size_t(length);
  if (stream_ && total > max_) {  // a bomb's giant record: refused before it is decompressed
    return decompression_error(Error(ErrorKind::kInvalidArgument,
                                     "record " + where() + " claims " + std::to_string(length) +
                                         " bytes, beyond the decompression bound of " + std::to_string(max_)));
  }
  if (!fill(total)) return false;
  if (available() < total) return malformed("record " + where() + " runs beyond the records section");
  const char* why = nullptr;
  if (!parse_record(ByteView(window() + pos_, total), out, &why)) {
    return malformed(std::string(why ? why : "malformed record") + " (record " + where() + ")");
  }
  pos_ += total;
  --left_;
  return true;
}

}  // namespace samsa

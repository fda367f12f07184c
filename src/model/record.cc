#include "model/record.h"

#include <string>

namespace samsa {

namespace {

// ByteReader's contract (bounded reads, a sticky failure, varints of at
// most 5 / 10 bytes) with the one-byte varint, by far the most common in
// records, decoded inline: Produce walks every record of every batch, and
// the out-of-line ByteReader calls were most of that walk's cost.
class RecordReader {
 public:
  explicit RecordReader(ByteView data) : begin_(data.data()), p_(data.data()), end_(data.data() + data.size()) {}

  bool ok() const { return ok_; }
  size_t position() const { return size_t(p_ - begin_); }
  size_t remaining() const { return size_t(end_ - p_); }
  bool at_end() const { return ok_ && p_ == end_; }

  int8_t read_i8() {
    if (p_ == end_) return failed<int8_t>();
    return int8_t(*p_++);
  }
  int32_t read_varint() {
    uint32_t z = (p_ != end_ && *p_ < 0x80) ? *p_++ : read_uvarint_slow();
    return int32_t((z >> 1) ^ -(z & 1));
  }
  int64_t read_varlong() {
    uint64_t z = (p_ != end_ && *p_ < 0x80) ? *p_++ : read_uvarlong_slow();
    return int64_t((z >> 1) ^ -(z & 1));
  }
  ByteView read_bytes(size_t n) {
    if (remaining() < n) return failed<ByteView>();
    ByteView v(p_, n);
    p_ += n;
    return v;
  }
  void skip(size_t n) { (void)read_bytes(n); }

 private:
  template <class T>
  T failed() {
    ok_ = false;
    p_ = end_;  // every later read fails too
    return T{};
  }
  uint32_t read_uvarint_slow() {
    uint32_t result = 0;
    for (int shift = 0; shift < 35 && p_ != end_; shift += 7) {
      uint8_t b = *p_++;
      if (shift == 28 && (b & 0xf0)) break;  // would overflow 32 bits
      result |= uint32_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return result;
    }
    return failed<uint32_t>();
  }
  uint64_t read_uvarlong_slow() {
    uint64_t result = 0;
    for (int shift = 0; shift < 64 && p_ != end_; shift += 7) {
      uint8_t b = *p_++;
      result |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return result;
    }
    return failed<uint64_t>();  // ran out, or more than 10 bytes
  }

  const uint8_t* begin_;
  const uint8_t* p_;
  const uint8_t* end_;
  bool ok_ = true;
};

// A nullable byte field: varint length, -1 = null.
bool read_nullable(RecordReader& r, std::optional<ByteView>& out) {
  int32_t len = r.read_varint();
  if (!r.ok() || len < -1) return false;
  if (len == -1) {
    out.reset();
    return true;
  }
  ByteView b = r.read_bytes(size_t(len));
  if (!r.ok()) return false;
  out = b;
  return true;
}

// Each header takes at least two bytes (two varints), so a count beyond
// half the bytes left is refused before looping (Kafka refuses a count
// beyond the bytes left).
bool skip_headers(RecordReader& r, int32_t count, const char*& why) {
  if (size_t(count) > r.remaining() / 2) {
    why = "header count beyond the record";
    return false;
  }
  for (int32_t i = 0; i < count; ++i) {
    int32_t klen = r.read_varint();
    if (!r.ok() || klen < 0) {
      why = "bad header key length";
      return false;
    }
    r.skip(size_t(klen));
    std::optional<ByteView> v;
    if (!r.ok() || !read_nullable(r, v)) {
      why = "header runs past the record";
      return false;
    }
  }
  return true;
}

bool parse_body(ByteView body, Record& out, const char*& why) {
  RecordReader r(body);
  out.attributes = r.read_i8();
  out.timestamp_delta = r.read_varlong();
  out.offset_delta = r.read_varint();
  if (!r.ok()) {
    why = "record ends inside its timestamp or offset delta";
    return false;
  }
  if (!read_nullable(r, out.key)) {
    why = "bad key length";
    return false;
  }
  if (!read_nullable(r, out.value)) {
    why = "bad value length";
    return false;
  }
  out.header_count = r.read_varint();
  if (!r.ok() || out.header_count < 0) {
    why = "bad header count";
    return false;
  }
  size_t headers_start = r.position();
  if (!skip_headers(r, out.header_count, why)) return false;
  // The length prefix must cover the record exactly (Kafka rejects both
  // short and long records).
  if (!r.at_end()) {
    why = "bytes left inside the record after its headers";
    return false;
  }
  out.headers_bytes = body.subspan(headers_start);
  return true;
}
}  // namespace

bool RecordHeaderIterator::next(RecordHeader& out) {
  if (left_ <= 0) return false;
  RecordReader r(data_.subspan(pos_));
  int32_t klen = r.read_varint();
  if (!r.ok() || klen < 0) return false;
  out.key = as_string_view(r.read_bytes(size_t(klen)));
  if (!read_nullable(r, out.value)) return false;
  pos_ += r.position();
  --left_;
  return true;
}

bool parse_record(ByteView input, Record& out, const char** why) {
  const char* reason = nullptr;
  RecordReader outer(input);
  int32_t length = outer.read_varint();
  if (!outer.ok() || length < 0) {
    reason = "bad record length";
  } else {
    size_t prefix = outer.position();
    ByteView body = outer.read_bytes(size_t(length));
    if (!outer.ok()) {
      reason = "record length beyond the records section";
    } else if (parse_body(body, out, reason)) {
      out.encoded_size = prefix + size_t(length);
      return true;
    }
  }
  if (why) *why = reason;
  return false;
}

Result<RecordIterator> RecordIterator::open(ByteView batch, size_t max_decompressed_bytes) {
  if (batch.size() < batch_layout::kHeaderSize)
    return Error(ErrorKind::kCorrupt, "batch shorter than its header");
  RecordBatchHeader h(batch.data());
  if (h.magic() != 2) return Error(ErrorKind::kCorrupt, "not a magic 2 batch");
  if (h.records_count() < 0) return Error(ErrorKind::kCorrupt, "negative records count");
  // Only this batch's bytes, even if the caller passed a longer buffer.
  if (h.batch_length() < 0 || size_t(h.total_size()) > batch.size())
    return Error(ErrorKind::kCorrupt, "batchLength beyond the buffer");
  if (size_t(h.total_size()) < batch_layout::kHeaderSize) return Error(ErrorKind::kCorrupt, "batchLength too small");
  batch = batch.first(size_t(h.total_size()));
  Compression codec = h.compression();
  if (!is_known_compression(int(codec))) return Error(ErrorKind::kUnsupported, "unknown compression codec");
  if (codec == Compression::kNone) return RecordIterator(batch, Bytes(), false);
  Bytes plain;
  RETURN_IF_ERROR(decompress_to(codec, batch.subspan(batch_layout::kHeaderSize), plain, max_decompressed_bytes));
  return RecordIterator(batch, std::move(plain), true);
}

RecordIterator::RecordIterator(ByteView batch, Bytes decompressed, bool compressed)
    : header_(batch.data()), decompressed_(std::move(decompressed)) {
  // A moved vector keeps its heap buffer, so records_ survives moving *this.
  records_ = compressed ? ByteView(decompressed_) : batch.subspan(batch_layout::kHeaderSize);
  left_ = header_.records_count();
}

bool RecordIterator::next(Record& out) {
  if (failed_) return false;
  if (left_ == 0) {
    if (pos_ != records_.size()) {
      failed_ = true;
      why_ = "bytes left after the last record (recordsCount too small?)";
    }
    return false;
  }
  if (pos_ == records_.size()) {
    failed_ = true;
    why_ = "records section ends before recordsCount records";
    return false;
  }
  if (!parse_record(records_.subspan(pos_), out, &why_)) {
    failed_ = true;
    return false;
  }
  pos_ += out.encoded_size;
  --left_;
  return true;
}

Status RecordIterator::status() const {
  if (!failed_) return ok_status();
  int32_t index = header_.records_count() - left_;  // the record being read when it failed
  return Error(ErrorKind::kCorrupt, std::string(why_ ? why_ : "malformed record") + " (record " +
                                        std::to_string(index) + " of " + std::to_string(header_.records_count()) +
                                        ", at byte " + std::to_string(pos_) + " of the records section)");
}

}  // namespace samsa

#include "model/record.h"

#include <string>

#include "base/byte_reader.h"

namespace samsa {

namespace {
// A nullable byte field: varint length, -1 = null.
bool read_nullable(ByteReader& r, std::optional<ByteView>& out) {
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

bool skip_headers(ByteReader& r, int32_t count) {
  for (int32_t i = 0; i < count; ++i) {
    int32_t klen = r.read_varint();
    if (!r.ok() || klen < 0) return false;
    r.skip(size_t(klen));
    std::optional<ByteView> v;
    if (!read_nullable(r, v)) return false;
  }
  return r.ok();
}
}  // namespace

bool RecordHeaderIterator::next(RecordHeader& out) {
  if (left_ <= 0) return false;
  ByteReader r(data_.subspan(pos_));
  int32_t klen = r.read_varint();
  if (!r.ok() || klen < 0) return false;
  out.key = r.read_string_view(size_t(klen));
  if (!read_nullable(r, out.value)) return false;
  pos_ += r.position();
  --left_;
  return true;
}

bool parse_record(ByteView input, Record& out) {
  ByteReader outer(input);
  int32_t length = outer.read_varint();
  if (!outer.ok() || length < 0) return false;
  size_t prefix = outer.position();
  ByteView body = outer.read_bytes(size_t(length));
  if (!outer.ok()) return false;
  ByteReader r(body);
  out.attributes = r.read_i8();
  out.timestamp_delta = r.read_varlong();
  out.offset_delta = r.read_varint();
  if (!r.ok() || !read_nullable(r, out.key) || !read_nullable(r, out.value)) return false;
  out.header_count = r.read_varint();
  if (!r.ok() || out.header_count < 0) return false;
  size_t headers_start = r.position();
  if (!skip_headers(r, out.header_count)) return false;
  // The length prefix must cover the record exactly (Kafka rejects both
  // short and long records).
  if (!r.at_end()) return false;
  out.headers_bytes = body.subspan(headers_start);
  out.encoded_size = prefix + size_t(length);
  return true;
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
    if (pos_ != records_.size()) failed_ = true;  // trailing bytes after the last record
    return false;
  }
  if (!parse_record(records_.subspan(pos_), out)) {
    failed_ = true;
    return false;
  }
  pos_ += out.encoded_size;
  --left_;
  return true;
}

Status RecordIterator::status() const {
  if (!failed_) return ok_status();
  if (left_ == 0) return Error(ErrorKind::kCorrupt, "bytes left after the last record of the batch");
  return Error(ErrorKind::kCorrupt, "malformed record (" + std::to_string(left_) + " of " +
                                        std::to_string(header_.records_count()) + " unread)");
}

}  // namespace samsa

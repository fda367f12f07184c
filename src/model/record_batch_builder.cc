#include "model/record_batch_builder.h"

#include <algorithm>

#include "base/byte_writer.h"
#include "model/record_batch.h"

namespace samsa {

RecordBatchBuilder::RecordBatchBuilder(RecordBatchOptions options) : options_(options) {}

void RecordBatchBuilder::add(int64_t timestamp_ms, std::optional<ByteView> key, std::optional<ByteView> value,
                             std::span<const RecordHeader> headers) {
  add_with_offset_delta(last_offset_delta_ + 1, timestamp_ms, key, value, headers);
}

void RecordBatchBuilder::add_with_offset_delta(int32_t offset_delta, int64_t timestamp_ms,
                                               std::optional<ByteView> key, std::optional<ByteView> value,
                                               std::span<const RecordHeader> headers) {
  ASSERT(!built_);
  ASSERT(offset_delta > last_offset_delta_);
  if (count_ == 0) base_timestamp_ = timestamp_ms;
  max_timestamp_ = std::max(max_timestamp_, timestamp_ms);
  encode_record(offset_delta, timestamp_ms - base_timestamp_, key, value, headers);
  last_offset_delta_ = offset_delta;
  ++count_;
}

namespace {
size_t nullable_size(std::optional<ByteView> b) {
  return b ? size_t(varint_size(int32_t(b->size()))) + b->size() : size_t(varint_size(-1));
}
void write_nullable(ByteWriter& w, std::optional<ByteView> b) {
  if (!b) {
    w.write_varint(-1);
    return;
  }
  w.write_varint(int32_t(b->size()));
  w.write_bytes(*b);
}
}  // namespace

void RecordBatchBuilder::encode_record(int32_t offset_delta, int64_t timestamp_delta, std::optional<ByteView> key,
                                       std::optional<ByteView> value, std::span<const RecordHeader> headers) {
  // The length prefix comes first, so size the body before writing it.
  size_t body = 1 + size_t(varlong_size(timestamp_delta)) + size_t(varint_size(offset_delta)) +
                nullable_size(key) + nullable_size(value) + size_t(varint_size(int32_t(headers.size())));
  for (const RecordHeader& h : headers)
    body += size_t(varint_size(int32_t(h.key.size()))) + h.key.size() + nullable_size(h.value);
  ByteWriter w(records_);
  w.write_varint(int32_t(body));
  w.write_i8(0);  // record attributes: unused
  w.write_varlong(timestamp_delta);
  w.write_varint(offset_delta);
  write_nullable(w, key);
  write_nullable(w, value);
  w.write_varint(int32_t(headers.size()));
  for (const RecordHeader& h : headers) {
    w.write_varint(int32_t(h.key.size()));
    w.write_string(h.key);
    write_nullable(w, h.value);
  }
}

Status RecordBatchBuilder::build_to(Bytes& out) {
  ASSERT(!built_);
  if (count_ == 0) return Error(ErrorKind::kInvalidArgument, "a record batch needs at least one record");
  built_ = true;
  size_t start = out.size();
  out.resize(start + batch_layout::kHeaderSize);
  if (options_.compression == Compression::kNone) {
    out.insert(out.end(), records_.begin(), records_.end());
  } else {
    Status st = compress_to(options_.compression, records_, out, options_.compression_level);
    if (!st.ok()) {
      out.resize(start);
      return st;
    }
  }
  size_t size = out.size() - start;
  if (size - batch_layout::kLogOverhead > size_t(INT32_MAX)) {
    out.resize(start);
    return Error(ErrorKind::kInvalidArgument, "record batch larger than 2 GiB");
  }
  int16_t attributes = int16_t(options_.compression);
  if (options_.transactional) attributes |= batch_attr::kTransactional;
  if (options_.control) attributes |= batch_attr::kControl;
  int64_t max_timestamp = max_timestamp_;
  if (options_.log_append_time_ms) {
    attributes |= batch_attr::kLogAppendTime;
    max_timestamp = *options_.log_append_time_ms;
  }
  uint8_t* p = out.data() + start;
  namespace L = batch_layout;
  store_be64(p + L::kBaseOffset, uint64_t(options_.base_offset.value()));
  store_be32(p + L::kBatchLength, uint32_t(size - L::kLogOverhead));
  store_be32(p + L::kPartitionLeaderEpoch, uint32_t(options_.partition_leader_epoch.value()));
  p[L::kMagic] = 2;
  store_be16(p + L::kAttributes, uint16_t(attributes));
  store_be32(p + L::kLastOffsetDelta, uint32_t(last_offset_delta_));
  store_be64(p + L::kBaseTimestamp, uint64_t(base_timestamp_));
  store_be64(p + L::kMaxTimestamp, uint64_t(max_timestamp));
  store_be64(p + L::kProducerId, uint64_t(options_.producer_id.value()));
  store_be16(p + L::kProducerEpoch, uint16_t(options_.producer_epoch.value()));
  store_be32(p + L::kBaseSequence, uint32_t(options_.base_sequence));
  store_be32(p + L::kRecordsCount, uint32_t(count_));
  store_be32(p + L::kCrc, compute_batch_crc(ByteView(p, size)));
  return ok_status();
}

Result<Bytes> RecordBatchBuilder::build() {
  Bytes out;
  RETURN_IF_ERROR(build_to(out));
  return out;
}

Result<Bytes> build_simple_batch(std::span<const std::string_view> values, int64_t base_timestamp_ms,
                                 RecordBatchOptions options) {
  RecordBatchBuilder b(options);
  for (size_t i = 0; i < values.size(); ++i) b.add(base_timestamp_ms + int64_t(i), std::nullopt, as_bytes(values[i]));
  return b.build();
}

}  // namespace samsa

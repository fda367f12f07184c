#include "model/legacy_message_set.h"

#include <zlib.h>

#include <string>

#include "base/byte_reader.h"
#include "base/byte_writer.h"
#include "model/record.h"
#include "model/record_batch.h"
#include "model/record_batch_builder.h"

namespace samsa {

namespace {

uint32_t legacy_crc(ByteView covered) {
  return uint32_t(crc32(0, covered.data(), uInt(covered.size())));
}

Error corrupt(const std::string& why) { return Error(ErrorKind::kCorrupt, "legacy message set: " + why); }

bool read_legacy_bytes(ByteReader& r, std::optional<ByteView>& out) {
  int32_t len = r.read_i32();
  if (!r.ok() || len < -1) return false;
  if (len == -1) {
    out.reset();
    return true;
  }
  out = r.read_bytes(size_t(len));
  return r.ok();
}

// Parses the message body (from crc to the end) of one entry.
Status parse_message(int64_t offset, ByteView message, LegacyMessage& out) {
  ByteReader r(message);
  uint32_t crc = r.read_u32();
  out.offset = offset;
  out.magic = r.read_i8();
  if (!r.ok()) return corrupt("message shorter than its header");
  if (out.magic != 0 && out.magic != 1) return corrupt("magic " + std::to_string(out.magic));
  size_t min = out.magic == 0 ? legacy_layout::kMinMessageV0 : legacy_layout::kMinMessageV1;
  if (message.size() < min) return corrupt("message size " + std::to_string(message.size()));
  if (legacy_crc(message.subspan(4)) != crc) return corrupt("CRC-32 mismatch at offset " + std::to_string(offset));
  out.attributes = r.read_i8();
  out.timestamp = out.magic == 1 ? r.read_i64() : -1;
  if (!read_legacy_bytes(r, out.key) || !read_legacy_bytes(r, out.value)) return corrupt("bad key/value length");
  if (!r.at_end()) return corrupt("bytes after the value");
  return ok_status();
}

Status decompress_legacy(Compression codec, int8_t magic, ByteView in, Bytes& out, size_t max) {
  switch (codec) {
    case Compression::kGzip:
    case Compression::kSnappy: return decompress_to(codec, in, out, max);
    // Magic 0 frames carry the broken header checksum; accept either.
    case Compression::kLz4: return decompress_lz4_legacy_to(in, out, max);
    default:
      (void)magic;
      return Error(ErrorKind::kUnsupported, std::string("legacy message set: codec ") + to_string(codec));
  }
}

}  // namespace

Result<LegacyMessageSet> LegacyMessageSet::parse(ByteView bytes, const LegacyParseOptions& options) {
  LegacyMessageSet set;
  RETURN_IF_ERROR(set.parse_entries(bytes, options));
  return set;
}

Status LegacyMessageSet::parse_entries(ByteView bytes, const LegacyParseOptions& options) {
  size_t pos = 0;
  while (pos < bytes.size()) {
    ByteView rest = bytes.subspan(pos);
    int32_t size = rest.size() >= legacy_layout::kLogOverhead ? int32_t(load_be32(rest.data() + 8)) : 0;
    bool partial = rest.size() < legacy_layout::kLogOverhead || (size >= 0 && size_t(size) > rest.size() - 12);
    if (partial && options.allow_truncated_tail) {
      truncated_ = true;
      break;
    }
    if (partial || size < 0) return corrupt("entry extends past the buffer or has a negative size");
    LegacyMessage m;
    RETURN_IF_ERROR(parse_message(int64_t(load_be64(rest.data())), rest.subspan(12, size_t(size)), m));
    m.wrapper = wrapper_count_++;
    if (m.compression() == Compression::kNone) {
      messages_.push_back(m);
    } else {
      RETURN_IF_ERROR(expand_wrapper(m, options));
    }
    pos += legacy_layout::kLogOverhead + size_t(size);
  }
  bytes_parsed_ = pos;
  if (pos == 0 && !truncated_) return corrupt("empty message set");
  return ok_status();
}

Status LegacyMessageSet::expand_wrapper(const LegacyMessage& wrapper, const LegacyParseOptions& options) {
  if (!wrapper.value) return corrupt("compressed message without a value");
  Bytes inner;
  RETURN_IF_ERROR(decompress_legacy(wrapper.compression(), wrapper.magic, *wrapper.value, inner,
                                    options.max_decompressed_bytes));
  buffers_.push_back(std::move(inner));
  ByteView data(buffers_.back());
  size_t first = messages_.size();
  for (size_t pos = 0; pos < data.size();) {
    ByteView rest = data.subspan(pos);
    if (rest.size() < legacy_layout::kLogOverhead) return corrupt("partial inner entry");
    int32_t size = int32_t(load_be32(rest.data() + 8));
    if (size < 0 || size_t(size) > rest.size() - 12) return corrupt("inner entry beyond the wrapper");
    LegacyMessage m;
    RETURN_IF_ERROR(parse_message(int64_t(load_be64(rest.data())), rest.subspan(12, size_t(size)), m));
    if (m.compression() != Compression::kNone) return corrupt("nested compression");
    if (m.magic != wrapper.magic) return corrupt("inner magic differs from the wrapper's");
    m.wrapper = wrapper.wrapper;
    m.attributes = wrapper.attributes;
    if (wrapper.log_append_time()) m.timestamp = wrapper.timestamp;
    messages_.push_back(m);
    pos += legacy_layout::kLogOverhead + size_t(size);
  }
  if (messages_.size() == first) return corrupt("compressed message with no inner messages");
  if (wrapper.magic == 1) {
    // Relative inner offsets: the wrapper holds the last one's absolute offset.
    // Two's complement arithmetic, as Kafka's (Java) wrapper iterator: hostile
    // offsets wrap instead of overflowing; the broker assigns offsets anyway.
    uint64_t base = uint64_t(wrapper.offset) - uint64_t(messages_.back().offset);
    for (size_t i = first; i < messages_.size(); ++i)
      messages_[i].offset = int64_t(base + uint64_t(messages_[i].offset));
  }
  return ok_status();
}

void write_legacy_message(Bytes& out, int8_t magic, int64_t offset, int8_t attributes, int64_t timestamp,
                          std::optional<ByteView> key, std::optional<ByteView> value) {
  ByteWriter w(out);
  w.write_i64(offset);
  size_t size_at = w.reserve(4);
  size_t crc_at = w.reserve(4);
  w.write_i8(magic);
  w.write_i8(attributes);
  if (magic >= 1) w.write_i64(timestamp);
  for (const std::optional<ByteView>& b : {key, value}) {
    w.write_i32(b ? int32_t(b->size()) : -1);
    if (b) w.write_bytes(*b);
  }
  w.patch_i32(size_at, int32_t(out.size() - crc_at));
  store_be32(out.data() + crc_at, legacy_crc(ByteView(out).subspan(crc_at + 4)));
}

// ---- up-conversion ----

Result<Bytes> upconvert_to_v2(const LegacyMessageSet& set) {
  Bytes out;
  const std::vector<LegacyMessage>& msgs = set.messages();
  for (size_t i = 0; i < msgs.size();) {
    // A batch = one wrapper's messages, or a run of uncompressed messages.
    Compression codec = msgs[i].compression();
    size_t end = i + 1;
    while (end < msgs.size() && msgs[end].compression() == codec &&
           (codec == Compression::kNone || msgs[end].wrapper == msgs[i].wrapper))
      ++end;
    RecordBatchBuilder builder({.compression = codec});
    for (size_t j = i; j < end; ++j) builder.add(msgs[j].timestamp, msgs[j].key, msgs[j].value);
    RETURN_IF_ERROR(builder.build_to(out));
    i = end;
  }
  return out;
}

// ---- down-conversion ----

namespace {

int64_t record_timestamp(const RecordBatchHeader& h, const Record& r) {
  return h.log_append_time() ? h.max_timestamp() : r.timestamp(h);
}

Status write_uncompressed(RecordIterator& it, int8_t magic, Bytes& out) {
  const RecordBatchHeader& h = it.header();
  int8_t attrs = (magic >= 1 && h.log_append_time()) ? legacy_layout::kLogAppendTime : 0;
  Record r;
  while (it.next(r))
    write_legacy_message(out, magic, r.offset(h).value(), attrs, record_timestamp(h, r), r.key, r.value);
  return it.status();
}

Status compress_inner(Compression codec, int8_t magic, ByteView inner, Bytes& value) {
  if (codec == Compression::kSnappy) return compress_snappy_xerial_to(inner, value);
  if (codec == Compression::kLz4 && magic == 0) return compress_lz4_legacy_to(inner, value);
  return compress_to(codec, inner, value);
}

Status write_wrapper(RecordIterator& it, int8_t magic, Bytes& out) {
  const RecordBatchHeader& h = it.header();
  Bytes inner;
  Record r;
  int64_t last_offset = 0, max_ts = -1;
  while (it.next(r)) {
    last_offset = r.offset(h).value();
    int64_t ts = record_timestamp(h, r);
    max_ts = std::max(max_ts, ts);
    // Magic 1 inner offsets are relative to the batch; magic 0 absolute.
    int64_t inner_offset = magic >= 1 ? int64_t(r.offset_delta) : last_offset;
    write_legacy_message(inner, magic, inner_offset, 0, ts, r.key, r.value);
  }
  RETURN_IF_ERROR(it.status());
  if (inner.empty()) return ok_status();
  Bytes value;
  RETURN_IF_ERROR(compress_inner(h.compression(), magic, inner, value));
  int8_t attrs = int8_t(h.compression());
  if (magic >= 1 && h.log_append_time()) attrs |= legacy_layout::kLogAppendTime;
  write_legacy_message(out, magic, last_offset, attrs, max_ts, std::nullopt, ByteView(value));
  return ok_status();
}

}  // namespace

Result<Bytes> downconvert_to_legacy(ByteView records, const DownconvertOptions& options) {
  if (options.magic != 0 && options.magic != 1)
    return Error(ErrorKind::kInvalidArgument, "down-conversion target must be magic 0 or 1");
  Bytes out;
  BatchIterator batches(records);
  while (std::optional<BatchRef> b = batches.next()) {
    if (b->header.is_control()) continue;
    Result<RecordIterator> it = RecordIterator::open(b->bytes, options.max_decompressed_bytes);
    if (!it.ok()) return it.error();
    Compression codec = b->header.compression();
    bool wrap = options.keep_compression && codec != Compression::kNone && codec != Compression::kZstd;
    RETURN_IF_ERROR(wrap ? write_wrapper(*it, options.magic, out) : write_uncompressed(*it, options.magic, out));
  }
  if (batches.malformed()) return corrupt("not a v2 batch at byte " + std::to_string(batches.position()));
  return out;
}

}  // namespace samsa

// Fuzz target: the record batch validator (model/record_batch.h), record
// parsing, legacy message sets and the conversions between the formats, as
// the produce path and the fetch path for old clients run them.
//
// Input: byte 0 = mode bits, the rest a RECORDS field.
//   bit 0..2  ValidateOptions deep, deep_if_compressed, from_client
//   bit 3     keep the CRCs as given (else every complete batch, or top-level
//             legacy message, gets a correct CRC, so that mutations reach
//             what lies behind the CRC check)
//   bit 4     pack: v2 batches carry their records uncompressed in the input
//             and are compressed here with the codec their attributes name;
//             a legacy set is wrapped in one compressed wrapper message
//             (codec from bits 5-6: gzip, snappy, lz4; magic from bit 7;
//             the input's last 8 bytes are the wrapper's offset)
// Properties, beyond memory safety and bounded allocation:
//   - a valid set walks the same batches with BatchIterator, each with a
//     storage frame (check_batch) when it came from a client;
//   - deep-valid batches iterate exactly recordsCount records, each with
//     exactly headerCount headers; LogAppendTime stamping keeps them valid;
//     down-conversion for old fetchers succeeds and parses back;
//   - a legacy set that parses up-converts to batches that validate deeply.

#include <zlib.h>

#include <algorithm>

#include "fuzz_support.h"
#include "model/legacy_message_set.h"
#include "model/record.h"
#include "model/record_batch.h"
#include "storage/batch_check.h"

namespace samsa::fuzz {
namespace {

namespace bl = batch_layout;

constexpr size_t kBound = size_t(1) << 20;  // decompression bound: small inputs, fast runs

struct Mode {
  ValidateOptions options;
  bool keep_crc = false;
  bool pack = false;
  Compression legacy_codec = Compression::kGzip;
  int8_t legacy_magic = 0;
};

Mode mode_of(uint8_t b) {
  Mode m;
  m.options.deep = b & 1;
  m.options.deep_if_compressed = b & 2;
  m.options.from_client = b & 4;
  m.options.max_decompressed_bytes = kBound;
  m.keep_crc = b & 8;
  m.pack = b & 16;
  m.legacy_codec = Compression(1 + (b >> 5 & 3) % 3);
  m.legacy_magic = int8_t(b >> 7);
  return m;
}

void fix_v2_crcs(Bytes& buf) {
  for (size_t pos = 0; buf.size() - pos >= bl::kHeaderSize;) {
    int32_t len = int32_t(load_be32(buf.data() + pos + bl::kBatchLength));
    if (len < kMinBatchLength || size_t(len) > buf.size() - pos - bl::kLogOverhead) return;
    size_t size = size_t(len) + bl::kLogOverhead;
    if (buf[pos + bl::kMagic] == 2) store_be32(buf.data() + pos + bl::kCrc, compute_batch_crc(ByteView(buf).subspan(pos, size)));
    pos += size;
  }
}

// Compresses the records section of every complete batch with its codec.
Bytes pack_v2(ByteView in) {
  Bytes out;
  size_t pos = 0;
  while (in.size() - pos >= bl::kHeaderSize) {
    int32_t len = int32_t(load_be32(in.data() + pos + bl::kBatchLength));
    if (len < kMinBatchLength || size_t(len) > in.size() - pos - bl::kLogOverhead) break;
    ByteView batch = in.subspan(pos, size_t(len) + bl::kLogOverhead);
    pos += batch.size();
    size_t start = out.size();
    out.insert(out.end(), batch.begin(), batch.begin() + bl::kHeaderSize);
    Compression codec = RecordBatchHeader(batch.data()).compression();
    if (!is_known_compression(int(codec)) || !compress_to(codec, batch.subspan(bl::kHeaderSize), out).ok()) {
      out.insert(out.end(), batch.begin() + bl::kHeaderSize, batch.end());
    }
    store_be32(out.data() + start + bl::kBatchLength, uint32_t(out.size() - start - bl::kLogOverhead));
  }
  out.insert(out.end(), in.begin() + pos, in.end());
  return out;
}

// Legacy entry: offset i64 | size i32 | crc u32 | magic ... (CRC-32 over magic..end).
void fix_legacy_crcs(Bytes& buf) {
  for (size_t pos = 0; buf.size() - pos >= 12 + 4;) {
    int32_t size = int32_t(load_be32(buf.data() + pos + 8));
    if (size < 4 || size_t(size) > buf.size() - pos - 12) return;
    uint8_t* msg = buf.data() + pos + 12;
    store_be32(msg, uint32_t(::crc32(0, msg + 4, uInt(size - 4))));
    pos += 12 + size_t(size);
  }
}

Bytes wrap_legacy(ByteView inner, int64_t wrapper_offset, const Mode& m) {
  Bytes packed;
  Status st = m.legacy_codec == Compression::kLz4 && m.legacy_magic == 0
                  ? compress_lz4_legacy_to(inner, packed)
                  : compress_to(m.legacy_codec, inner, packed);
  if (!st.ok()) return Bytes(inner.begin(), inner.end());
  Bytes out;
  write_legacy_message(out, m.legacy_magic, wrapper_offset, int8_t(m.legacy_codec), /*timestamp=*/1000, std::nullopt,
                       ByteView(packed));
  return out;
}

void check_legacy(ByteView bytes) {
  auto set = LegacyMessageSet::parse(bytes, LegacyParseOptions{kBound, false});
  if (!set.ok()) return;
  FUZZ_CHECK(!set->messages().empty());
  auto v2 = upconvert_to_v2(*set);
  FUZZ_CHECK(v2.ok());
  ValidateOptions strict;
  strict.deep = true;
  strict.max_decompressed_bytes = kDefaultMaxDecompressedBytes;
  RecordsValidation v = validate_records(*v2, strict);
  if (!v.ok()) std::fprintf(stderr, "up-converted set invalid: %s: %s\n", to_string(v.fault), v.detail.c_str());
  FUZZ_CHECK(v.ok());
  FUZZ_CHECK(v.summary.record_count == int64_t(set->messages().size()));
}

void check_records_of(ByteView batch) {
  auto it = RecordIterator::open(batch, kBound);
  FUZZ_CHECK(it.ok());
  Record rec;
  int32_t n = 0;
  while (it->next(rec)) {
    ++n;
    RecordHeaderIterator headers = rec.headers();
    RecordHeader h;
    int32_t hn = 0;
    while (headers.next(h)) ++hn;
    FUZZ_CHECK(hn == rec.header_count);
  }
  FUZZ_CHECK(it->status().ok());
  FUZZ_CHECK(n == RecordBatchHeader(batch.data()).records_count());
}

void check_valid_set(ByteView bytes, const RecordsValidation& v, const Mode& m) {
  BatchIterator walk(bytes);
  size_t i = 0;
  int64_t records = 0;
  bool any_control = false;
  while (auto ref = walk.next()) {
    FUZZ_CHECK(i < v.summary.batches.size());
    FUZZ_CHECK(ref->position == v.summary.batches[i].position && ref->bytes.size() == v.summary.batches[i].size);
    if (m.options.from_client) FUZZ_CHECK(check_batch(ref->bytes).ok());
    bool deep = m.options.deep || (m.options.deep_if_compressed && ref->header.compression() != Compression::kNone);
    if (deep) {
      check_records_of(ref->bytes);
      Bytes stamped(ref->bytes.begin(), ref->bytes.end());
      stamp_log_append_time(stamped.data(), stamped.size(), 1'700'000'000'000);
      FUZZ_CHECK(validate_batch(stamped, m.options) == BatchFault::kNone);
    }
    (void)find_timestamp_in_batch(ref->bytes, ref->header.base_timestamp() + 1);
    records += ref->header.records_count();
    any_control = any_control || ref->header.is_control();
    ++i;
  }
  FUZZ_CHECK(walk.at_end() && i == v.summary.batches.size());
  if (m.options.deep && m.options.from_client && !any_control) {
    for (int8_t magic : {int8_t(0), int8_t(1)}) {
      DownconvertOptions down;
      down.magic = magic;
      down.max_decompressed_bytes = kBound;
      auto legacy = downconvert_to_legacy(bytes, down);
      FUZZ_CHECK(legacy.ok());
      auto parsed = LegacyMessageSet::parse(*legacy, LegacyParseOptions{kDefaultMaxDecompressedBytes, false});
      FUZZ_CHECK(parsed.ok());
      FUZZ_CHECK(int64_t(parsed->messages().size()) == records);
    }
  }
}

void check_record_batches(FuzzInput in) {
  const Mode m = mode_of(in.u8());
  ByteView payload = in.rest();
  bool legacy = payload.size() > bl::kMagic && int8_t(payload[bl::kMagic]) < 2;
  Bytes bytes;
  if (legacy) {
    int64_t wrapper_offset = 0;
    if (m.pack) {  // the input's last 8 bytes are the wrapper's offset
      const size_t n = std::min<size_t>(8, payload.size());
      FuzzInput offset(payload.data() + payload.size() - n, n);
      wrapper_offset = int64_t(uint64_t(offset.u32()) << 32 | offset.u32());
      payload = payload.first(payload.size() - n);
    }
    bytes.assign(payload.begin(), payload.end());
    if (!m.keep_crc) fix_legacy_crcs(bytes);
    if (m.pack) bytes = wrap_legacy(bytes, wrapper_offset, m);
    check_legacy(bytes);
    return;
  }
  bytes = m.pack ? pack_v2(payload) : Bytes(payload.begin(), payload.end());
  if (!m.keep_crc) fix_v2_crcs(bytes);
  RecordsValidation v = validate_records(bytes, m.options);
  if (v.ok()) check_valid_set(bytes, v, m);
}

}  // namespace
}  // namespace samsa::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  samsa::fuzz::check_record_batches(samsa::fuzz::FuzzInput(data, size));
  return 0;
}

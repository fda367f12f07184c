#pragma once
// Test-only helper (included by *_test.cc): builds valid, uncompressed
// RecordBatch v2 bytes (header + CRC-32C + records with null keys). Kept tiny
// on purpose; model/record_batch.h is the real builder.

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "base/byte_writer.h"
#include "base/bytes.h"
#include "base/crc32c.h"
#include "base/test_files.h"
#include "io/posix_file_system.h"
#include "model/ids.h"
#include "model/record_batch_header.h"

namespace samsa::test {

struct BatchSpec {
  Offset base_offset{0};
  int32_t records = 1;
  int64_t first_timestamp = 1000;
  int64_t timestamp_step = 1;  // record i has first_timestamp + i * step
  int32_t value_bytes = 10;
  uint8_t fill = 'x';
  int64_t producer_id = -1;  // an idempotent producer's batch when >= 0
  int16_t producer_epoch = -1;
  int32_t base_sequence = -1;
  int16_t attributes = 0;  // batch_attr bits (transactional: 0x10)
};

inline Bytes make_batch(const BatchSpec& s) {
  Bytes out;
  ByteWriter w(out);
  w.write_i64(s.base_offset.value());
  size_t length_at = w.reserve(4);
  w.write_i32(0);   // partitionLeaderEpoch
  w.write_i8(2);    // magic
  size_t crc_at = w.reserve(4);
  w.write_i16(s.attributes);
  w.write_i32(s.records - 1);
  int64_t max_ts = s.first_timestamp;
  for (int32_t i = 0; i < s.records; ++i) max_ts = std::max(max_ts, s.first_timestamp + i * s.timestamp_step);
  w.write_i64(s.first_timestamp);
  w.write_i64(max_ts);
  w.write_i64(s.producer_id);
  w.write_i16(s.producer_epoch);
  w.write_i32(s.base_sequence);
  w.write_i32(s.records);
  for (int32_t i = 0; i < s.records; ++i) {
    Bytes rec;
    ByteWriter r(rec);
    r.write_i8(0);
    r.write_varlong(i * s.timestamp_step);
    r.write_varint(i);
    r.write_varint(-1);  // null key
    r.write_varint(s.value_bytes);
    r.write_bytes(Bytes(size_t(s.value_bytes), s.fill));
    r.write_uvarint(0);  // no headers
    w.write_varint(int32_t(rec.size()));
    w.write_bytes(rec);
  }
  w.patch_i32(length_at, int32_t(out.size() - batch_layout::kLogOverhead));
  store_be32(out.data() + crc_at, crc32c(ByteView(out).subspan(batch_layout::kAttributes)));
  return out;
}

// The real file system, for tests that want no faults (PosixFileSystem is
// stateless: one shared instance couples no test to another).
inline FileSystem& files() {
  static PosixFileSystem posix;
  return posix;
}

using TempDir = samsa::testing::TempDir;  // base/test_files.h

inline void append_to(Bytes& dst, const Bytes& src) { dst.insert(dst.end(), src.begin(), src.end()); }

}  // namespace samsa::test

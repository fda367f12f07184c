#pragma once
// Test-only helpers (included by *_test.cc): keyed batches built with
// model's RecordBatchBuilder, and reading a Log back record by record with
// every batch CRC-checked, to compare what a consumer would see.

#include <gtest/gtest.h>
#include <unistd.h>

#include <optional>
#include <string>
#include <vector>

#include "model/record.h"
#include "model/record_batch.h"
#include "model/record_batch_builder.h"
#include "storage/log.h"

namespace samsa::test {

struct KV {
  std::string key;
  std::optional<std::string> value;  // nullopt = tombstone
};

inline ByteView as_bytes(const std::string& s) { return ByteView(reinterpret_cast<const uint8_t*>(s.data()), s.size()); }

inline Bytes keyed_batch(const std::vector<KV>& kvs, int64_t ts, Compression codec = Compression::kNone) {
  RecordBatchOptions o;
  o.compression = codec;
  RecordBatchBuilder b(o);
  for (const KV& kv : kvs) {
    std::optional<ByteView> v;
    if (kv.value) v = as_bytes(*kv.value);
    b.add(ts, as_bytes(kv.key), v);
  }
  auto out = b.build();
  EXPECT_TRUE(out.ok());
  return out.ok() ? std::move(out).value() : Bytes{};
}

inline Offset append_kvs(Log& log, const std::vector<KV>& kvs, int64_t ts, Compression codec = Compression::kNone) {
  Bytes b = keyed_batch(kvs, ts, codec);
  auto r = log.append(b.data(), b.size(), LeaderEpoch(1));
  EXPECT_TRUE(r.ok()) << r.error().to_string();
  return r.ok() ? r->first_offset : Offset(-1);
}

struct ReadRecord {
  int64_t offset;
  std::optional<std::string> key;
  std::optional<std::string> value;
  bool operator==(const ReadRecord&) const = default;
};

// Every record from the log start to the end, as a consumer reads it (skips
// records below `from` in the first batch). Fails the test on a bad CRC or
// offsets that do not increase.
inline std::vector<ReadRecord> read_all(Log& log, Offset from = Offset(-1)) {
  std::vector<ReadRecord> out;
  Offset next = from.value() < 0 ? log.log_start_offset() : from;
  int64_t last = -1;
  while (next < log.log_end_offset()) {
    auto r = log.read(next, 1 << 20, log.log_end_offset(), true);
    EXPECT_TRUE(r.ok()) << r.error().to_string();
    if (!r.ok() || r->records.size == 0) break;
    auto read = read_region(r->records);
    EXPECT_TRUE(read.ok()) << read.error().to_string();
    if (!read.ok()) break;
    Bytes data = std::move(read).value();
    RecordsValidation v = validate_records(data, ValidateOptions{.deep = true, .from_client = false});
    EXPECT_TRUE(v.ok()) << v.detail;
    if (!v.ok()) break;
    for (const BatchInfo& b : v.summary.batches) {
      ByteView batch = ByteView(data).subspan(b.position, b.size);
      RecordBatchHeader h(batch.data());
      auto it = RecordIterator::open(batch);
      EXPECT_TRUE(it.ok());
      Record rec;
      while (it->next(rec)) {
        int64_t o = (h.base_offset() + rec.offset_delta).value();
        if (o < next.value()) continue;
        EXPECT_GT(o, last);
        last = o;
        ReadRecord rr{o, std::nullopt, std::nullopt};
        if (rec.key) rr.key = std::string(rec.key->begin(), rec.key->end());
        if (rec.value) rr.value = std::string(rec.value->begin(), rec.value->end());
        out.push_back(rr);
      }
      next = h.last_offset() + 1;
    }
  }
  return out;
}

}  // namespace samsa::test

#include "model/legacy_message_set.h"

#include <gtest/gtest.h>

#include <string>

#include "base/rng.h"
#include "model/record.h"
#include "model/record_batch.h"
#include "model/record_batch_builder.h"
#include "model/test_captures.h"

namespace samsa {
namespace {

using testing::capture_records;
using testing::load_capture;

std::string str(std::optional<ByteView> b) { return b ? std::string(as_string_view(*b)) : std::string("<null>"); }

LegacyMessageSet parse_ok(ByteView bytes, LegacyParseOptions options = {}) {
  Result<LegacyMessageSet> set = LegacyMessageSet::parse(bytes, options);
  EXPECT_TRUE(set.ok()) << (set.ok() ? "" : set.error().to_string());
  return set.ok() ? std::move(set).value() : LegacyMessageSet();
}

void expect_key_values(const LegacyMessageSet& set, int n) {
  ASSERT_EQ(int(set.messages().size()), n);
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(set.messages()[i].offset, i);
    EXPECT_EQ(str(set.messages()[i].key), "key-" + std::to_string(i));
    EXPECT_EQ(str(set.messages()[i].value), "some-value-" + std::to_string(i));
  }
}

// ---- captures from real brokers and clients ----

TEST(LegacyCaptures, MessageSetFiles) {
  // These files start with the int32 MessageSetSize of the RECORDS field.
  Bytes plain;
  ASSERT_TRUE(load_capture("messageSet/messages_v0_uncompressed.json.json", &plain));
  ASSERT_EQ(plain.size(), 133u);
  LegacyMessageSet set = parse_ok(ByteView(plain).subspan(4));
  expect_key_values(set, 3);
  EXPECT_EQ(set.messages()[0].magic, 0);
  EXPECT_EQ(set.messages()[0].timestamp, -1);

  Bytes gz;

  ASSERT_TRUE(load_capture("messageSet/messages_v0_GZIP.json", &gz));
  ASSERT_EQ(gz.size(), 111u);
  LegacyMessageSet gset = parse_ok(ByteView(gz).subspan(4));
  expect_key_values(gset, 3);
  EXPECT_EQ(gset.messages()[2].compression(), Compression::kGzip);
  EXPECT_EQ(gset.wrapper_count(), 1);
}

TEST(LegacyCaptures, Magic1GzipWrapperRelativeOffsets) {
  Bytes cap;
  ASSERT_TRUE(load_capture("fetch/v2_response_gzip.json", &cap));
  ByteView records = capture_records(cap, 63, 127);
  ASSERT_FALSE(records.empty());
  LegacyMessageSet set = parse_ok(records);
  expect_key_values(set, 3);  // wrapper offset 2 - last relative 2 + i
  EXPECT_EQ(set.messages()[0].magic, 1);
  EXPECT_GT(set.messages()[0].timestamp, 1'500'000'000'000);
}

TEST(LegacyCaptures, Magic1Uncompressed) {
  Bytes cap;
  ASSERT_TRUE(load_capture("fetch/v2_response.json", &cap));
  ByteView records = capture_records(cap, 63, 153);
  ASSERT_FALSE(records.empty());
  LegacyMessageSet set = parse_ok(records);
  expect_key_values(set, 3);
  EXPECT_EQ(set.messages()[1].timestamp, 0x15f88bea065);
}

TEST(LegacyCaptures, ProduceV2FromKafkaJs) {
  for (auto [file, size] : {std::pair{"produce/v2_request.json", 267}, {"produce/v2_request_gzip_linux.json", 229}}) {
    SCOPED_TRACE(file);
    Bytes cap;
    ASSERT_TRUE(load_capture(file, &cap));
    ByteView records = capture_records(cap, 55, size_t(size));
    ASSERT_FALSE(records.empty());
    LegacyMessageSet set = parse_ok(records);
    ASSERT_FALSE(set.messages().empty());
    // Up-convert, then the result passes the v2 validator used on produce.
    Result<Bytes> v2 = upconvert_to_v2(set);
    ASSERT_TRUE(v2.ok());
    RecordsValidation v = validate_records(*v2, {.deep = true});
    ASSERT_TRUE(v.ok()) << v.detail;
    EXPECT_EQ(v.summary.record_count, int64_t(set.messages().size()));
  }
}

TEST(LegacyCaptures, PartialTailInFetch) {
  Bytes cap;
  ASSERT_TRUE(load_capture("fetch/v2_response_partial_messages_many_partitions.json", &cap));
  ByteView records = capture_records(cap, 53, 1024);
  ASSERT_FALSE(records.empty());
  EXPECT_FALSE(LegacyMessageSet::parse(records).ok());
  LegacyMessageSet set = parse_ok(records, {.allow_truncated_tail = true});
  // One gzip wrapper of 1979 bytes cut at 1024: nothing complete, the tail
  // is reported as truncated (the fetcher asks again with a bigger size).
  EXPECT_TRUE(set.truncated_tail());
  EXPECT_TRUE(set.messages().empty());
  EXPECT_EQ(set.bytes_parsed(), 0u);
}

TEST(LegacyCaptures, MixedFormatsPrefix) {
  // A Fetch v4 response holding magic 1 messages followed by v2 batches.
  Bytes cap;
  ASSERT_TRUE(load_capture("fetch/v4_response_mixed_formats.json", &cap));
  ByteView records = capture_records(cap, 70, 160194);
  ASSERT_FALSE(records.empty());
  // The legacy entries come first; a legacy parse of the whole fails at the
  // first v2 batch (magic 2), which is the point: formats are told apart by
  // the magic byte.
  Result<LegacyMessageSet> all = LegacyMessageSet::parse(records);
  ASSERT_FALSE(all.ok());
  EXPECT_NE(all.error().message().find("magic 2"), std::string::npos);
}

// ---- corruption ----

TEST(LegacyMessageSet, CrcAndSizeChecks) {
  Bytes set;
  write_legacy_message(set, 1, 0, 0, 1234, as_bytes("k"), as_bytes("v"));
  write_legacy_message(set, 1, 1, 0, 1235, std::nullopt, std::nullopt);
  LegacyMessageSet ok = parse_ok(set);
  ASSERT_EQ(ok.messages().size(), 2u);
  EXPECT_FALSE(ok.messages()[1].key.has_value());
  EXPECT_FALSE(ok.messages()[1].value.has_value());
  // Every byte from the magic of the first message on is covered by a CRC
  // or a size check.
  for (size_t i = 16; i < set.size(); ++i) {
    Bytes bad = set;
    bad[i] ^= 0x10;
    if (i >= 36 && i < 36 + 12) continue;  // second entry's offset/size: size checked below
    EXPECT_FALSE(LegacyMessageSet::parse(bad).ok()) << i;
  }
  for (size_t n = 1; n < set.size(); ++n) {
    if (n == 36) continue;  // exactly one whole entry (12 + 14 + 8 + 2 * 5)
    EXPECT_FALSE(LegacyMessageSet::parse(ByteView(set).first(n)).ok()) << n;
  }
  Bytes huge = set;
  store_be32(huge.data() + 8, 0x7fffffff);
  EXPECT_FALSE(LegacyMessageSet::parse(huge).ok());
}

// ---- down-conversion ----

Bytes three_batches() {
  Bytes log;
  int64_t base = 100;
  for (Compression c : {Compression::kNone, Compression::kGzip, Compression::kSnappy, Compression::kLz4,
                        Compression::kZstd}) {
    RecordBatchBuilder b({.compression = c, .base_offset = Offset(base)});
    for (int i = 0; i < 3; ++i) {
      std::string k = "k" + std::to_string(base + i), v = std::string(40, char('a' + i));
      b.add(5000 + base + i, as_bytes(k), as_bytes(v));
    }
    EXPECT_TRUE(b.build_to(log).ok());
    base += 3;
  }
  return log;
}

TEST(Downconvert, BothMagicsAllCodecsRoundTrip) {
  Bytes log = three_batches();
  for (int8_t magic : {0, 1}) {
    for (bool keep : {true, false}) {
      SCOPED_TRACE("magic " + std::to_string(magic) + (keep ? " keep" : " plain"));
      Result<Bytes> legacy = downconvert_to_legacy(log, {.magic = magic, .keep_compression = keep});
      ASSERT_TRUE(legacy.ok()) << legacy.error().to_string();
      LegacyMessageSet set = parse_ok(*legacy);
      ASSERT_EQ(set.messages().size(), 15u);
      for (int i = 0; i < 15; ++i) {
        const LegacyMessage& m = set.messages()[i];
        EXPECT_EQ(m.offset, 100 + i);
        EXPECT_EQ(m.magic, magic);
        EXPECT_EQ(str(m.key), "k" + std::to_string(100 + i));
        EXPECT_EQ(m.timestamp, magic == 1 ? 5100 + i : -1);
      }
      // Batches 1-3 (gzip, snappy, lz4) stay compressed when asked; zstd never.
      EXPECT_EQ(set.messages()[3].compression(), keep ? Compression::kGzip : Compression::kNone);
      EXPECT_EQ(set.messages()[9].compression(), keep ? Compression::kLz4 : Compression::kNone);
      EXPECT_EQ(set.messages()[12].compression(), Compression::kNone);
      EXPECT_EQ(set.wrapper_count(), keep ? 9 : 15);
    }
  }
}

TEST(Downconvert, Magic0Lz4UsesBrokenChecksum) {
  Bytes log;
  RecordBatchBuilder b({.compression = Compression::kLz4});
  b.add(1, std::nullopt, as_bytes("lz4 legacy"));
  ASSERT_TRUE(b.build_to(log).ok());
  Bytes legacy = *downconvert_to_legacy(log, {.magic = 0});
  // entry header 12 + crc 4 + magic 1 + attrs 1 + key len 4 + value len 4 = 26: the frame.
  ByteView frame = ByteView(legacy).subspan(26);
  EXPECT_EQ(frame[6], uint8_t(xxhash32(frame.first(6), 0) >> 8));
  EXPECT_EQ(str(parse_ok(legacy).messages()[0].value), "lz4 legacy");
}

TEST(Downconvert, SkipsControlDropsPartialTailStampsLogAppendTime) {
  Bytes log;
  RecordBatchBuilder ctl({.producer_id = ProducerId(1), .producer_epoch = ProducerEpoch(0), .control = true});
  ctl.add(1, as_bytes("\0\0\0\1"), as_bytes("x"));
  ASSERT_TRUE(ctl.build_to(log).ok());
  RecordBatchBuilder data({.base_offset = Offset(1), .log_append_time_ms = 999});
  data.add(5, std::nullopt, as_bytes("d"));
  ASSERT_TRUE(data.build_to(log).ok());
  size_t whole = log.size();
  Bytes extra = *build_simple_batch(std::vector<std::string_view>{"cut"}, 1);
  log.insert(log.end(), extra.begin(), extra.end() - 3);
  Bytes legacy = *downconvert_to_legacy(log, {.magic = 1});  // must outlive the views
  LegacyMessageSet set = parse_ok(legacy);
  ASSERT_EQ(set.messages().size(), 1u);
  EXPECT_EQ(set.messages()[0].offset, 1);
  EXPECT_TRUE(set.messages()[0].log_append_time());
  EXPECT_EQ(set.messages()[0].timestamp, 999);
  EXPECT_GT(log.size(), whole);
  EXPECT_FALSE(downconvert_to_legacy(log, {.magic = 2}).ok());
}

// ---- up-conversion ----

TEST(Upconvert, OneBatchPerWrapperAndRun) {
  // Two uncompressed messages, then a gzip wrapper of three (v1 relative
  // inner offsets), then one more uncompressed message.
  Bytes set;
  write_legacy_message(set, 1, 0, 0, 10, as_bytes("a"), as_bytes("1"));
  write_legacy_message(set, 1, 1, 0, 11, as_bytes("b"), as_bytes("2"));
  Bytes inner;
  for (int i = 0; i < 3; ++i) write_legacy_message(inner, 1, i, 0, 20 + i, std::nullopt, as_bytes("z"));
  Bytes value = *compress(Compression::kGzip, inner);
  write_legacy_message(set, 1, 4, int8_t(Compression::kGzip), 22, std::nullopt, ByteView(value));
  write_legacy_message(set, 1, 5, 0, 30, as_bytes("c"), std::nullopt);
  LegacyMessageSet parsed = parse_ok(set);
  ASSERT_EQ(parsed.messages().size(), 6u);
  EXPECT_EQ(parsed.messages()[2].offset, 2);  // 4 - 2 + 0
  Bytes v2 = *upconvert_to_v2(parsed);
  RecordsValidation v = validate_records(v2, {.deep = true});
  ASSERT_TRUE(v.ok()) << v.detail;
  ASSERT_EQ(v.summary.batches.size(), 3u);
  EXPECT_EQ(v.summary.batches[0].records_count, 2);
  EXPECT_EQ(v.summary.batches[1].compression, Compression::kGzip);
  EXPECT_EQ(v.summary.batches[1].records_count, 3);
  EXPECT_EQ(v.summary.batches[2].records_count, 1);
  EXPECT_EQ(v.summary.max_timestamp, 30);
  // And back: down-convert gives the same keys, values and timestamps.
  Bytes legacy = *downconvert_to_legacy(v2, {.magic = 1});
  LegacyMessageSet back = parse_ok(legacy);
  ASSERT_EQ(back.messages().size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(str(back.messages()[i].key), str(parsed.messages()[i].key));
    EXPECT_EQ(str(back.messages()[i].value), str(parsed.messages()[i].value));
    EXPECT_EQ(back.messages()[i].timestamp, parsed.messages()[i].timestamp);
  }
}

TEST(Upconvert, NestedCompressionAndZstdRefused) {
  Bytes inner;
  write_legacy_message(inner, 0, 0, int8_t(Compression::kGzip), -1, std::nullopt, as_bytes("x"));
  Bytes set;
  write_legacy_message(set, 0, 0, int8_t(Compression::kGzip), -1, std::nullopt,
                       ByteView(*compress(Compression::kGzip, inner)));
  EXPECT_FALSE(LegacyMessageSet::parse(set).ok());
  Bytes z;
  write_legacy_message(z, 1, 0, int8_t(Compression::kZstd), 1, std::nullopt, ByteView(*compress(Compression::kZstd, inner)));
  Result<LegacyMessageSet> r = LegacyMessageSet::parse(z);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kUnsupported);
}

}  // namespace
}  // namespace samsa

namespace samsa {
namespace {

TEST(LegacyFuzz, MutatedSetsNeverCrash) {
  Bytes plain;
  for (int i = 0; i < 3; ++i) write_legacy_message(plain, 1, i, 0, 5, as_bytes("key"), as_bytes("value"));
  std::vector<Bytes> seeds = {plain};
  for (Compression c : {Compression::kGzip, Compression::kSnappy, Compression::kLz4}) {
    Bytes wrapped;
    write_legacy_message(wrapped, 1, 2, int8_t(c), 5, std::nullopt, ByteView(*compress(c, plain)));
    seeds.push_back(wrapped);
  }
  Rng rng(11);
  for (int round = 0; round < 3000; ++round) {
    Bytes b = seeds[rng.uniform(seeds.size())];
    for (int i = 0; i < 1 + int(rng.uniform(3)); ++i) b[rng.uniform(b.size())] = uint8_t(rng.next_u64());
    if (rng.chance(0.3)) b.resize(rng.uniform(b.size() + 1));
    Result<LegacyMessageSet> r = LegacyMessageSet::parse(b, {.allow_truncated_tail = rng.chance(0.5)});
    if (r.ok()) (void)upconvert_to_v2(*r);
    (void)downconvert_to_legacy(b, {.magic = 1});
  }
}

}  // namespace
}  // namespace samsa

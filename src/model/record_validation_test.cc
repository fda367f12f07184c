// The deep record check of validate_records (issue 10, item 3): batches
// whose CRC is right but whose records are broken. Every malformed batch
// here gets a CRC recomputed over the broken bytes, so what is tested is
// the record check, never the CRC check. Each malformation is tried both
// uncompressed and gzip-compressed: one validator serves both.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/byte_writer.h"
#include "model/compression.h"
#include "model/record_batch.h"
#include "model/record_batch_builder.h"

namespace samsa {
namespace {

constexpr int64_t kBaseTimestamp = 1'700'000'000'000;

// A record written field by field, so each field can be broken on its own.
struct RawRecord {
  int32_t offset_delta = 0;
  int64_t timestamp_delta = 0;
  std::string key = "k";
  std::string value = "value";
  int32_t header_count = 0;
  Bytes headers;       // encoded headers (header_count need not match)
  Bytes extra_inside;  // bytes inside the record after the headers
  std::optional<int32_t> length_override;
};

Bytes encode(const RawRecord& r) {
  Bytes body;
  ByteWriter w(body);
  w.write_i8(0);
  w.write_varlong(r.timestamp_delta);
  w.write_varint(r.offset_delta);
  w.write_varint(int32_t(r.key.size()));
  w.write_string(r.key);
  w.write_varint(int32_t(r.value.size()));
  w.write_string(r.value);
  w.write_varint(r.header_count);
  w.write_bytes(r.headers);
  w.write_bytes(r.extra_inside);
  Bytes out;
  ByteWriter o(out);
  o.write_varint(r.length_override.value_or(int32_t(body.size())));
  o.write_bytes(body);
  return out;
}

Bytes section_of(int n) {
  Bytes s;
  for (int i = 0; i < n; ++i) {
    RawRecord r;
    r.offset_delta = i;
    r.timestamp_delta = i;
    Bytes e = encode(r);
    s.insert(s.end(), e.begin(), e.end());
  }
  return s;
}

// A v2 batch around `section` (raw records, compressed here with `codec`),
// with the header a producer would write for `count` records, and a CRC
// over exactly these bytes.
Bytes batch_of(ByteView section, int32_t count, Compression codec = Compression::kNone,
               int64_t max_timestamp = kBaseTimestamp, bool log_append_time = false) {
  Bytes records;
  if (codec == Compression::kNone) {
    records.assign(section.begin(), section.end());
  } else {
    EXPECT_TRUE(compress_to(codec, section, records).ok());
  }
  Bytes b(batch_layout::kHeaderSize, 0);
  b.insert(b.end(), records.begin(), records.end());
  uint8_t* p = b.data();
  store_be32(p + batch_layout::kBatchLength, uint32_t(b.size() - batch_layout::kLogOverhead));
  store_be32(p + batch_layout::kPartitionLeaderEpoch, uint32_t(-1));
  p[batch_layout::kMagic] = 2;
  uint16_t attributes = uint16_t(codec) | (log_append_time ? batch_attr::kLogAppendTime : 0);
  store_be16(p + batch_layout::kAttributes, attributes);
  store_be32(p + batch_layout::kLastOffsetDelta, uint32_t(count - 1));
  store_be64(p + batch_layout::kBaseTimestamp, uint64_t(kBaseTimestamp));
  store_be64(p + batch_layout::kMaxTimestamp, uint64_t(max_timestamp));
  store_be64(p + batch_layout::kProducerId, uint64_t(-1));
  store_be16(p + batch_layout::kProducerEpoch, uint16_t(-1));
  store_be32(p + batch_layout::kBaseSequence, uint32_t(-1));
  store_be32(p + batch_layout::kRecordsCount, uint32_t(count));
  store_be32(p + batch_layout::kCrc, compute_batch_crc(b));
  return b;
}

Bytes concat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

Bytes raw(std::initializer_list<uint8_t> bytes) { return Bytes(bytes); }

struct Malformed {
  const char* name;
  Bytes section;
  int32_t count;
  const char* detail;  // a piece of the message that says what is wrong
};

std::vector<Malformed> malformations() {
  RawRecord key_past;
  key_past.key = "kk";
  Bytes key_past_bytes = encode(key_past);
  key_past_bytes[4] = 40;  // keyLength varint (zig-zag 20): past the record

  RawRecord value_past;
  Bytes value_past_bytes = encode(value_past);
  value_past_bytes[6] = 60;  // valueLength varint (zig-zag 30)

  RawRecord huge_headers;
  huge_headers.header_count = INT32_MAX;

  RawRecord negative_headers;
  negative_headers.header_count = -1;

  RawRecord header_key_negative;
  header_key_negative.header_count = 1;
  header_key_negative.headers = raw({0x01, 0x00});  // key length -1

  RawRecord header_value_past;
  header_value_past.header_count = 1;
  header_value_past.headers = raw({0x02, 'h', 0x50});  // key "h", value length 40

  RawRecord extra;
  extra.extra_inside = raw({0xAA, 0xBB});

  RawRecord too_short;
  too_short.length_override = 5;  // cuts the record inside its key/value

  // A 20-byte record whose timestamp delta varlong runs on for 11 bytes.
  Bytes long_varint_bytes = concat({raw({40, 0}), Bytes(11, 0xFF), Bytes(8, 0x00)});

  RawRecord second_delta;
  second_delta.offset_delta = 5;
  RawRecord first_delta;
  first_delta.offset_delta = 1;

  Bytes three = section_of(3);
  return {
      {"count above the records", three, 4, "ends before recordsCount"},
      {"count below the records", three, 2, "bytes left after the last record"},
      {"record length 2^32-1", concat({raw({0xFF, 0xFF, 0xFF, 0xFF, 0x0F}), section_of(1)}), 1, "bad record length"},
      {"record length varint too long", concat({Bytes(6, 0xFF), section_of(1)}), 1, "bad record length"},
      {"record length past the section", concat({section_of(1), raw({0x7E, 0x00})}), 2, "beyond the records section"},
      {"record length too short", encode(too_short), 1, "bad value length"},
      {"key length past the record", key_past_bytes, 1, "bad key length"},
      {"key length below -1", concat({raw({8, 0, 0, 0, 0x03})}), 1, "bad key length"},
      {"value length past the record", value_past_bytes, 1, "bad value length"},
      {"timestamp delta varlong too long", long_varint_bytes, 1, "timestamp or offset delta"},
      {"header count 2^31-1", encode(huge_headers), 1, "header count beyond the record"},
      {"negative header count", encode(negative_headers), 1, "bad header count"},
      {"negative header key length", encode(header_key_negative), 1, "bad header key length"},
      {"header value past the record", encode(header_value_past), 1, "header runs past the record"},
      {"bytes left inside a record", encode(extra), 1, "bytes left inside the record"},
      {"junk after the last record", concat({section_of(2), raw({0x00, 0x01, 0x02})}), 2, "bytes left after"},
      {"empty records section", Bytes{}, 1, "ends before recordsCount"},
      {"first offset delta not 0", encode(first_delta), 1, "offset delta 1"},
      {"offset deltas not 0..n-1", concat({section_of(1), encode(second_delta)}), 2, "offset delta 5"},
  };
}

ValidateOptions produce_options() { return {.deep = true}; }

TEST(RecordValidation, SoundBatchesPass) {
  for (Compression c : {Compression::kNone, Compression::kGzip, Compression::kLz4, Compression::kZstd}) {
    Bytes b = batch_of(section_of(3), 3, c);
    RecordsValidation v = validate_records(b, produce_options());
    EXPECT_TRUE(v.ok()) << to_string(c) << ": " << v.detail;
  }
}

TEST(RecordValidation, EachMalformationIsRefusedWithAReason) {
  for (Compression c : {Compression::kNone, Compression::kGzip}) {
    for (const Malformed& m : malformations()) {
      SCOPED_TRACE(std::string(m.name) + " / " + to_string(c));
      Bytes b = batch_of(m.section, m.count, c);
      // The CRC is right and the header is consistent: shallow validation,
      // what produce did before for uncompressed data, accepts the batch.
      EXPECT_TRUE(validate_records(b).ok());
      RecordsValidation v = validate_records(b, produce_options());
      EXPECT_EQ(v.fault, BatchFault::kBadRecord) << to_string(v.fault) << ": " << v.detail;
      EXPECT_EQ(v.kafka_error_code(), 87);  // INVALID_RECORD, as Kafka's InvalidRecordException
      EXPECT_NE(v.detail.find(m.detail), std::string::npos) << v.detail;
    }
  }
}

TEST(RecordValidation, MalformedBatchAfterAGoodOneIsReportedByIndex) {
  Bytes set = concat({batch_of(section_of(2), 2), batch_of(encode(RawRecord{.header_count = INT32_MAX}), 1)});
  RecordsValidation v = validate_records(set, produce_options());
  EXPECT_EQ(v.fault, BatchFault::kBadRecord);
  EXPECT_EQ(v.failed_batch, 1);
}

TEST(RecordValidation, StoredBatchesAllowCompactionGapsButNotBrokenFraming) {
  // A compacted batch: offsets 0 and 2 of lastOffsetDelta 2, count 2.
  Bytes gap = concat({section_of(1), encode(RawRecord{.offset_delta = 2})});
  Bytes b = batch_of(gap, 2);
  store_be32(b.data() + batch_layout::kLastOffsetDelta, 2);
  store_be32(b.data() + batch_layout::kCrc, compute_batch_crc(b));
  EXPECT_TRUE(validate_records(b, {.deep = true, .from_client = false}).ok());
  EXPECT_FALSE(validate_records(b, produce_options()).ok());
  Bytes junk = batch_of(concat({section_of(1), raw({0x01})}), 1);
  EXPECT_EQ(validate_records(junk, {.deep = true, .from_client = false}).fault, BatchFault::kBadRecord);
}

// ---- timestamps (item 9): Kafka's LogValidator.validateTimestamp ----

ValidateOptions with_policy(TimestampPolicy p) {
  ValidateOptions o = produce_options();
  o.timestamps = p;
  return o;
}

Bytes batch_at(int64_t timestamp) {
  RecordBatchBuilder b;
  b.add(timestamp, std::nullopt, as_bytes("v"));
  return *b.build();
}

TEST(RecordValidation, DefaultBoundsAcceptAnyCreateTimeAsKafkaDoes) {
  TimestampPolicy defaults{.now_ms = kBaseTimestamp};
  for (int64_t ts : {int64_t(-5), int64_t(-1), int64_t(0), INT64_MIN, INT64_MAX, kBaseTimestamp}) {
    EXPECT_TRUE(validate_records(batch_at(ts), with_policy(defaults)).ok()) << ts;
  }
}

TEST(RecordValidation, CreateTimeOutsideTheBoundsIsInvalidTimestamp) {
  TimestampPolicy p{.now_ms = kBaseTimestamp, .before_max_ms = 3'600'000, .after_max_ms = 60'000};
  RecordsValidation negative = validate_records(batch_at(-5), with_policy(p));
  EXPECT_EQ(negative.fault, BatchFault::kBadTimestamp);
  EXPECT_EQ(negative.kafka_error_code(), 32);  // INVALID_TIMESTAMP
  EXPECT_NE(negative.detail.find("Timestamp -5 of record 0"), std::string::npos) << negative.detail;
  EXPECT_EQ(validate_records(batch_at(kBaseTimestamp - 3'600'001), with_policy(p)).fault, BatchFault::kBadTimestamp);
  EXPECT_TRUE(validate_records(batch_at(kBaseTimestamp - 3'600'000), with_policy(p)).ok());
  EXPECT_EQ(validate_records(batch_at(kBaseTimestamp + 60'001), with_policy(p)).fault, BatchFault::kBadTimestamp);
  EXPECT_TRUE(validate_records(batch_at(kBaseTimestamp + 60'000), with_policy(p)).ok());
  EXPECT_TRUE(validate_records(batch_at(-1), with_policy(p)).ok());  // NO_TIMESTAMP is never checked
  // The second record of a batch, found through its timestamp delta.
  RecordBatchBuilder two;
  two.add(kBaseTimestamp, std::nullopt, as_bytes("a"));
  two.add(kBaseTimestamp + 120'000, std::nullopt, as_bytes("b"));
  RecordsValidation late = validate_records(*two.build(), with_policy(p));
  EXPECT_EQ(late.fault, BatchFault::kBadTimestamp);
  EXPECT_NE(late.detail.find("of record 1"), std::string::npos) << late.detail;
}

TEST(RecordValidation, ProducerMayNotSendLogAppendTimeToALogAppendTimeTopic) {
  Bytes lat = batch_of(section_of(1), 1, Compression::kNone, kBaseTimestamp, /*log_append_time=*/true);
  TimestampPolicy topic_lat{.log_append_time = true, .now_ms = kBaseTimestamp};
  EXPECT_EQ(validate_records(lat, with_policy(topic_lat)).fault, BatchFault::kBadTimestamp);
  TimestampPolicy topic_create{.now_ms = kBaseTimestamp};
  EXPECT_TRUE(validate_records(lat, with_policy(topic_create)).ok());
  // Under a LogAppendTime topic the broker stamps the time, so no bound applies.
  TimestampPolicy lat_bounded{.log_append_time = true, .now_ms = kBaseTimestamp, .before_max_ms = 1};
  EXPECT_TRUE(validate_records(batch_at(-5), with_policy(lat_bounded)).ok());
}

}  // namespace
}  // namespace samsa

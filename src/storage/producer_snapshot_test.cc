// The producer-snapshot codec: Kafka's PidSnapshot v1 layout byte for byte,
// a round trip of every retained batch, and every malformed file refused.
#include "storage/producer_snapshot.h"

#include <gtest/gtest.h>

#include <climits>

#include "base/byte_reader.h"
#include "base/byte_writer.h"
#include "base/crc32c.h"

namespace samsa {
namespace {

ProducerBatch batch(int64_t pid, int16_t epoch, int32_t first_seq, int32_t records, int64_t first_offset,
                    int64_t ts = 100) {
  int64_t last_seq = int64_t(first_seq) + records - 1;
  if (last_seq > INT32_MAX) last_seq -= int64_t(INT32_MAX) + 1;
  return ProducerBatch{ProducerId(pid),     ProducerEpoch(epoch), first_seq, int32_t(last_seq), Offset(first_offset),
                       Offset(first_offset + records - 1), ts};
}

void expect_same(const ProducerMap& got, const ProducerMap& want) {
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [id, entry] : want) {
    auto it = got.find(id);
    ASSERT_NE(it, got.end()) << id.value();
    EXPECT_EQ(it->second.epoch, entry.epoch) << id.value();
    EXPECT_EQ(it->second.last_timestamp, entry.last_timestamp) << id.value();
    EXPECT_EQ(it->second.batches, entry.batches) << id.value();
  }
}

// A valid file of `count` raw entries (the CRC recomputed), for the checks
// that must fail on something other than the CRC.
Bytes with_crc(Bytes b) {
  store_be32(b.data() + 2, crc32c(ByteView(b).subspan(6)));
  return b;
}

TEST(ProducerSnapshot, RoundTripKeepsEveryRetainedBatch) {
  ProducerStateTable t;
  for (int i = 0; i < 7; ++i) t.apply(batch(1, 0, i * 10, 10, 100 + i * 10, 500 + i));  // the last five stay
  t.apply(batch(2, 3, INT32_MAX - 1, 4, 400));                                            // sequence wraps
  t.apply(batch(3, 0, 0, 1, 410));
  t.apply(batch(3, 1, 0, 2, 411));  // a newer epoch dropped the older one's batch
  Bytes bytes = encode_producer_snapshot(t.producers());
  EXPECT_EQ(bytes.size(), kProducerSnapshotHeaderBytes + (5 + 1 + 1) * kProducerSnapshotEntryBytes);
  auto back = decode_producer_snapshot(bytes, Offset(413));
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  expect_same(*back, t.producers());
  EXPECT_EQ(back->at(ProducerId(2)).batches.back().first_seq, INT32_MAX - 1);
  EXPECT_EQ(back->at(ProducerId(2)).batches.back().last_seq, 1);  // MAX-1, MAX, 0, 1
}

TEST(ProducerSnapshot, KafkaLayout) {
  ProducerStateTable t;
  t.apply(batch(42, 7, 10, 5, 1000, /*ts=*/123456));
  Bytes bytes = encode_producer_snapshot(t.producers());
  ASSERT_EQ(bytes.size(), 10u + 46u);
  ByteReader r(bytes);
  EXPECT_EQ(r.read_i16(), 1);  // version
  EXPECT_EQ(r.read_u32(), crc32c(ByteView(bytes).subspan(6)));
  EXPECT_EQ(r.read_i32(), 1);       // entries
  EXPECT_EQ(r.read_i64(), 42);      // producer id
  EXPECT_EQ(r.read_i16(), 7);       // epoch
  EXPECT_EQ(r.read_i32(), 14);      // last sequence
  EXPECT_EQ(r.read_i64(), 1004);    // last offset
  EXPECT_EQ(r.read_i32(), 4);       // offset delta
  EXPECT_EQ(r.read_i64(), 123456);  // timestamp
  EXPECT_EQ(r.read_i32(), -1);      // coordinator epoch
  EXPECT_EQ(r.read_i64(), -1);      // current txn first offset
  EXPECT_TRUE(r.ok() && r.at_end());
  EXPECT_EQ(producer_snapshot_path("/d", Offset(1005)), "/d/00000000000000001005.snapshot");
}

TEST(ProducerSnapshot, KafkasOneEntryPerProducerAndMarkerOnlyEntriesRead) {
  Bytes b;
  ByteWriter w(b);
  w.write_i16(1);
  w.reserve(4);
  w.write_i32(2);
  for (int64_t last_offset : {int64_t(20), int64_t(-1)}) {  // a batch; a producer whose last entry was a marker
    w.write_i64(last_offset < 0 ? 6 : 5);
    w.write_i16(2);
    w.write_i32(last_offset < 0 ? -1 : 9);
    w.write_i64(last_offset);
    w.write_i32(last_offset < 0 ? 0 : 4);
    w.write_i64(777);
    w.write_i32(3);
    w.write_i64(-1);
  }
  auto got = decode_producer_snapshot(with_crc(b), Offset(21));
  ASSERT_TRUE(got.ok()) << got.error().to_string();
  ASSERT_EQ(got->at(ProducerId(5)).batches.size(), 1u);
  EXPECT_EQ(got->at(ProducerId(5)).batches[0], (BatchMetadata{5, 9, Offset(16), Offset(20)}));
  EXPECT_TRUE(got->at(ProducerId(6)).batches.empty());
  EXPECT_EQ(got->at(ProducerId(6)).epoch, ProducerEpoch(2));
}

TEST(ProducerSnapshot, MalformedFilesAreCorrupt) {
  ProducerStateTable t;
  t.apply(batch(1, 0, 0, 5, 0));
  t.apply(batch(2, 0, 0, 5, 5));
  const Bytes good = encode_producer_snapshot(t.producers());
  ASSERT_TRUE(decode_producer_snapshot(good, Offset(10)).ok());
  auto refused = [](const Bytes& b, Offset at = Offset(10)) {
    auto r = decode_producer_snapshot(b, at);
    return !r.ok() && r.error().kind() == ErrorKind::kCorrupt;
  };
  Bytes flipped = good;
  flipped[20] ^= 1;
  EXPECT_TRUE(refused(flipped));                                  // CRC
  EXPECT_TRUE(refused(Bytes(good.begin(), good.begin() + 5)));    // shorter than the header
  EXPECT_TRUE(refused(with_crc(Bytes(good.begin(), good.end() - 1))));  // a partial entry
  Bytes counted = good;
  store_be32(counted.data() + 6, 3);  // more entries than bytes
  EXPECT_TRUE(refused(with_crc(counted)));
  store_be32(counted.data() + 6, uint32_t(-1));
  EXPECT_TRUE(refused(with_crc(counted)));
  Bytes version = good;
  version[1] = 2;
  EXPECT_TRUE(refused(with_crc(version)));
  EXPECT_TRUE(refused(good, Offset(9)));  // a batch at or above the snapshot's own offset
  Bytes huge(kMaxProducerSnapshotBytes + 1, 0);
  EXPECT_TRUE(refused(huge));
}

// Found by the producer_snapshot fuzz target: a producer's batches are
// disjoint ranges of the log, so one that starts at or before the previous
// one's last offset is not a state any log had.
TEST(ProducerSnapshot, OverlappingBatchesOfAProducerAreCorrupt) {
  auto file = [](int64_t second_first_offset) {
    ProducerMap m;
    m[ProducerId(1)] = ProducerEntry{
        ProducerEpoch(0),
        {BatchMetadata{0, 4, Offset(0), Offset(4)},
         BatchMetadata{5, 9, Offset(second_first_offset), Offset(second_first_offset + 4)}},
        100};
    return encode_producer_snapshot(m);
  };
  EXPECT_TRUE(decode_producer_snapshot(file(5), Offset(20)).ok());  // adjacent: fine
  for (int64_t overlapping : {4, 2, 0}) {
    auto r = decode_producer_snapshot(file(overlapping), Offset(20));
    ASSERT_FALSE(r.ok()) << overlapping;
    EXPECT_EQ(r.error().kind(), ErrorKind::kCorrupt);
  }
}

}  // namespace
}  // namespace samsa

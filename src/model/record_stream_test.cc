// DecompressStream and RecordStream: the same bytes and records as the
// one-shot decompress()/RecordIterator, read in any chunk size, and hostile
// batches cost at most the bound (issue 10, item 5).

#include "model/record_stream.h"

#include <gtest/gtest.h>

#include <string>

#include "model/record_batch.h"
#include "model/record_batch_builder.h"

namespace samsa {
namespace {

constexpr Compression kCompressed[] = {Compression::kGzip, Compression::kSnappy, Compression::kLz4,
                                       Compression::kZstd};

Bytes text(size_t n) {
  Bytes out;
  for (size_t i = 0; out.size() < n; ++i) {
    std::string w = "word" + std::to_string(i % 97) + " ";
    out.insert(out.end(), w.begin(), w.end());
  }
  out.resize(n);
  return out;
}

Bytes batch_of(Compression codec, int records, size_t value_bytes, char fill = 0) {
  RecordBatchBuilder b({.compression = codec});
  Bytes value(value_bytes, uint8_t(fill));
  for (int i = 0; i < records; ++i) b.add(1000 + i, std::nullopt, ByteView(value));
  return *b.build();
}

TEST(DecompressStream, AnyChunkSizeGivesTheOneShotBytes) {
  Bytes input = text(300'000);
  for (Compression c : kCompressed) {
    SCOPED_TRACE(to_string(c));
    Bytes packed = *compress(c, input);
    for (size_t chunk : {size_t(1), size_t(7), size_t(4096), size_t(1) << 20}) {
      auto s = DecompressStream::open(c, packed, input.size());
      ASSERT_TRUE(s.ok());
      Bytes got;
      Bytes buf(chunk);
      for (int guard = 0; guard < 1'000'000; ++guard) {
        auto n = (*s)->read(buf);
        ASSERT_TRUE(n.ok()) << n.error().to_string();
        if (*n == 0) break;
        got.insert(got.end(), buf.begin(), buf.begin() + long(*n));
      }
      EXPECT_EQ(got, input) << "chunk " << chunk;
      EXPECT_EQ((*s)->produced(), input.size());
    }
    // One byte short of the bound: the read that passes it fails.
    auto s = DecompressStream::open(c, packed, input.size() - 1);
    if (!s.ok()) {  // snappy decodes up front and refuses at once
      EXPECT_EQ(s.error().kind(), ErrorKind::kInvalidArgument);
      continue;
    }
    Bytes buf(4096);
    Status last;
    for (int guard = 0; guard < 1'000'000; ++guard) {
      auto n = (*s)->read(buf);
      if (!n.ok()) {
        last = n.error();
        break;
      }
      ASSERT_NE(*n, 0u) << "reached the end past the bound";
    }
    ASSERT_FALSE(last.ok());
    EXPECT_EQ(last.error().kind(), ErrorKind::kInvalidArgument);
  }
}

TEST(RecordStream, SameRecordsAsTheIterator) {
  for (Compression c : {Compression::kNone, Compression::kGzip, Compression::kSnappy, Compression::kLz4,
                        Compression::kZstd}) {
    SCOPED_TRACE(to_string(c));
    // Small records, and records larger than the 64 KiB window.
    for (size_t value_bytes : {size_t(10), size_t(200'000)}) {
      Bytes batch = batch_of(c, 20, value_bytes, 'v');
      auto it = RecordIterator::open(batch);
      ASSERT_TRUE(it.ok());
      RecordStream stream(batch, kDefaultMaxDecompressedBytes);
      Record a, b;
      int n = 0;
      while (it->next(a)) {
        ASSERT_TRUE(stream.next(b)) << stream.status().error().to_string();
        EXPECT_EQ(a.offset_delta, b.offset_delta);
        ASSERT_TRUE(a.value && b.value);
        EXPECT_TRUE(std::equal(a.value->begin(), a.value->end(), b.value->begin(), b.value->end()));
        ++n;
      }
      EXPECT_FALSE(stream.next(b));
      EXPECT_TRUE(stream.status().ok());
      EXPECT_EQ(n, 20);
    }
  }
}

// Many records, each within the bound, together far beyond it: refused
// once the bound is crossed, having decompressed no more than the bound.
TEST(RecordStream, ABombOfManyRecordsCostsAtMostTheBound) {
  for (Compression c : {Compression::kGzip, Compression::kLz4, Compression::kZstd}) {
    SCOPED_TRACE(to_string(c));
    Bytes bomb = batch_of(c, 16, 256 << 10);  // 4 MiB of zeros
    ASSERT_LT(bomb.size(), 50'000u);
    constexpr size_t kBound = 2 << 20;
    RecordsValidation v = validate_records(bomb, {.deep_if_compressed = true, .max_decompressed_bytes = kBound});
    EXPECT_EQ(v.fault, BatchFault::kDecompressedTooLarge) << v.detail;
    EXPECT_EQ(v.kafka_error_code(), 10);  // MESSAGE_TOO_LARGE
    EXPECT_LE(v.decompressed_bytes, kBound + 1);
    EXPECT_GE(v.decompressed_bytes, kBound - (512 << 10));
  }
}

// One record that claims more than the bound is refused after one window.
TEST(RecordStream, ARecordClaimingMoreThanTheBoundIsNotDecompressed) {
  for (Compression c : {Compression::kGzip, Compression::kLz4, Compression::kZstd}) {
    SCOPED_TRACE(to_string(c));
    Bytes bomb = batch_of(c, 1, 8 << 20);
    RecordsValidation v = validate_records(bomb, {.deep_if_compressed = true, .max_decompressed_bytes = 1 << 20});
    EXPECT_EQ(v.fault, BatchFault::kDecompressedTooLarge) << v.detail;
    EXPECT_LE(v.decompressed_bytes, size_t(256) << 10);
  }
}

// The bound is shared by the batches of one call: each gets what the
// earlier ones left.
TEST(RecordStream, TheBoundCoversAllBatchesOfOneCall) {
  Bytes two = batch_of(Compression::kZstd, 3, 1 << 20);
  Bytes second = batch_of(Compression::kZstd, 3, 1 << 20);
  two.insert(two.end(), second.begin(), second.end());
  RecordsValidation alone = validate_records(ByteView(two).first(second.size()), {.deep_if_compressed = true});
  ASSERT_TRUE(alone.ok());
  size_t one_batch = alone.decompressed_bytes;
  EXPECT_GE(one_batch, size_t(3) << 20);
  RecordsValidation both = validate_records(two, {.deep_if_compressed = true, .max_decompressed_bytes = one_batch + 100});
  EXPECT_EQ(both.fault, BatchFault::kDecompressedTooLarge);
  EXPECT_EQ(both.failed_batch, 1);
  EXPECT_TRUE(validate_records(two, {.deep_if_compressed = true, .max_decompressed_bytes = 2 * one_batch}).ok());
}

// Malformed records inside a compressed batch are INVALID_RECORD, garbage
// the codec refuses is CORRUPT_MESSAGE.
TEST(RecordStream, MalformedRecordsAndBadDataKeepTheirFaults) {
  Bytes records = text(5000);  // not records at all
  Bytes packed = *compress(Compression::kZstd, records);
  Bytes batch = batch_of(Compression::kZstd, 1, 10);
  batch.resize(batch_layout::kHeaderSize);
  batch.insert(batch.end(), packed.begin(), packed.end());
  store_be32(batch.data() + batch_layout::kBatchLength, uint32_t(batch.size() - batch_layout::kLogOverhead));
  store_be32(batch.data() + batch_layout::kCrc, compute_batch_crc(batch));
  EXPECT_EQ(validate_records(batch, {.deep_if_compressed = true}).fault, BatchFault::kBadRecord);
  Bytes garbage = batch;
  for (size_t i = batch_layout::kHeaderSize; i < garbage.size(); ++i) garbage[i] = uint8_t(i * 13);
  store_be32(garbage.data() + batch_layout::kCrc, compute_batch_crc(garbage));
  EXPECT_EQ(validate_records(garbage, {.deep_if_compressed = true}).fault, BatchFault::kBadCompressedData);
}

}  // namespace
}  // namespace samsa

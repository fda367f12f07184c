#include "storage/segment.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "storage/batch_check.h"
#include "storage/test_batches.h"

namespace samsa {
namespace {

using test::BatchSpec;
using test::make_batch;

LogConfig small_config() {
  LogConfig c;
  c.index_interval_bytes = 100;
  c.segment_index_bytes = 4096;
  return c;
}

// Appends `n` batches of `records` records each, one append per batch.
// Batch i covers offsets [base + i*records, ...].
void fill(Segment& seg, int n, int records, int64_t ts0 = 1000) {
  for (int i = 0; i < n; ++i) {
    Offset first = seg.next_offset();
    Bytes b = make_batch(BatchSpec{first, records, ts0 + i * 10, 1, 20});
    Offset last = first + (records - 1);
    ASSERT_TRUE(seg.append(b, first, last, ts0 + i * 10 + records - 1).ok());
  }
}

TEST(SegmentTest, FileNamesAreTwentyDigits) {
  EXPECT_EQ(Segment::file_stem(Offset(42)), "00000000000000000042");
  EXPECT_EQ(Segment::log_path("/d", Offset(0)).string(), "/d/00000000000000000000.log");
}

TEST(SegmentTest, TranslateEveryOffsetAfterAppends) {
  test::TempDir dir;
  LogConfig cfg = small_config();
  auto seg = Segment::create(test::files(), dir.path(), Offset(100), cfg, 0);
  ASSERT_TRUE(seg.ok());
  fill(**seg, 50, 3);
  EXPECT_EQ((*seg)->next_offset(), Offset(250));
  for (int64_t o = 100; o < 250; ++o) {
    auto b = (*seg)->translate_offset(Offset(o));
    ASSERT_TRUE(b.ok());
    ASSERT_TRUE(b->has_value()) << o;
    EXPECT_LE((*b)->frame.base_offset, Offset(o));
    EXPECT_GE((*b)->frame.last_offset, Offset(o));
  }
  auto none = (*seg)->translate_offset(Offset(250));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST(SegmentTest, IndexIsSparseAndMapsLastOffsetToBatchPosition) {
  test::TempDir dir;
  LogConfig cfg = small_config();
  auto seg = Segment::create(test::files(), dir.path(), Offset(0), cfg, 0);
  ASSERT_TRUE(seg.ok());
  fill(**seg, 40, 2);
  ASSERT_TRUE((*seg)->finalize().ok());
  auto idx = OffsetIndex::open(test::files(), Segment::index_path(dir.path(), Offset(0)), Offset(0), false);
  ASSERT_TRUE(idx.ok());
  ASSERT_GT(idx->entries(), 2u);
  ASSERT_LT(idx->entries(), 40u);
  int64_t batch_size = int64_t(make_batch(BatchSpec{Offset(0), 2, 0, 1, 20}).size());
  for (size_t i = 0; i < idx->entries(); ++i) {
    OffsetPosition e = idx->entry(i);
    // batch k starts at k*batch_size and ends at offset 2k+1.
    EXPECT_EQ(e.position % batch_size, 0);
    EXPECT_EQ(e.offset.value(), 2 * (e.position / batch_size) + 1);
  }
  // The final entry points at the last batch (used by clean opens).
  EXPECT_EQ(idx->last_entry()->offset, Offset(79));
}

TEST(SegmentTest, CleanReopenReadsOnlyIndexes) {
  test::TempDir dir;
  LogConfig cfg = small_config();
  {
    auto seg = Segment::create(test::files(), dir.path(), Offset(0), cfg, 0);
    ASSERT_TRUE(seg.ok());
    fill(**seg, 30, 4);
    ASSERT_TRUE((*seg)->finalize().ok());
    ASSERT_TRUE((*seg)->flush().ok());
  }
  // Make the .log unreadable garbage of the same size: a clean open must
  // not look at it.
  auto log = Segment::log_path(dir.path(), Offset(0));
  auto size = std::filesystem::file_size(log);
  {
    std::ofstream f(log, std::ios::binary | std::ios::trunc);
    f << std::string(size, '\xff');
  }
  auto seg = Segment::open(test::files(), dir.path(), Offset(0), cfg, 0);
  ASSERT_TRUE(seg.ok());
  EXPECT_FALSE((*seg)->needs_rebuild());
  EXPECT_EQ((*seg)->next_offset(), Offset(120));
  EXPECT_EQ((*seg)->size(), int64_t(size));
  EXPECT_EQ((*seg)->max_timestamp(), 1000 + 29 * 10 + 3);
}

TEST(SegmentTest, GarbageMissingAndOversizedIndexesNeedRebuild) {
  test::TempDir dir;
  LogConfig cfg = small_config();
  {
    auto seg = Segment::create(test::files(), dir.path(), Offset(0), cfg, 0);
    ASSERT_TRUE(seg.ok());
    fill(**seg, 30, 4);
    ASSERT_TRUE((*seg)->finalize().ok());
  }
  auto index = Segment::index_path(dir.path(), Offset(0));
  auto tindex = Segment::time_index_path(dir.path(), Offset(0));
  auto check_rebuild = [&](const char* what) {
    auto seg = Segment::open(test::files(), dir.path(), Offset(0), cfg, 0);
    ASSERT_TRUE(seg.ok());
    EXPECT_TRUE((*seg)->needs_rebuild()) << what;
    auto r = (*seg)->recover();
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->batches, 30) << what;
    EXPECT_EQ(r->bytes_truncated, 0) << what;
    EXPECT_EQ((*seg)->next_offset(), Offset(120)) << what;
    for (int64_t o = 0; o < 120; o += 7) {
      auto b = (*seg)->translate_offset(Offset(o));
      ASSERT_TRUE(b.ok() && b->has_value());
      EXPECT_EQ((*b)->frame.base_offset, Offset(o / 4 * 4));
    }
    ASSERT_TRUE((*seg)->finalize().ok());
  };
  std::filesystem::remove(index);
  check_rebuild("missing index");
  std::filesystem::remove(tindex);
  {
    std::ofstream f(tindex, std::ios::binary | std::ios::trunc);
    f << std::string(36, '\x7f');  // timestamps far above, offsets beyond the segment
  }
  check_rebuild("garbage time index");
  {
    std::ofstream f(index, std::ios::binary | std::ios::trunc);
    f << std::string(37, '\x01');  // not whole entries
  }
  check_rebuild("garbage index");
  std::filesystem::resize_file(index, 1 << 16);  // zero-filled tail (never trimmed)
  check_rebuild("oversized index");
}

TEST(SegmentTest, ReadLimits) {
  test::TempDir dir;
  LogConfig cfg = small_config();
  auto seg = Segment::create(test::files(), dir.path(), Offset(0), cfg, 0);
  ASSERT_TRUE(seg.ok());
  fill(**seg, 20, 5);  // batches of 5 offsets
  int64_t bs = int64_t(make_batch(BatchSpec{Offset(0), 5, 0, 1, 20}).size());
  auto first = (*seg)->translate_offset(Offset(12));
  ASSERT_TRUE(first.ok() && first->has_value());
  EXPECT_EQ((*first)->position, 2 * bs);
  // max_bytes rounds down to whole batches.
  auto r = (*seg)->read(**first, int32_t(3 * bs + bs / 2), Offset(1000), false);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->position, 2 * bs);
  EXPECT_EQ(r->size, 3 * bs);
  // Upper bound excludes batches whose last offset reaches it.
  r = (*seg)->read(**first, 1 << 20, Offset(30), false);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->size, 4 * bs);  // offsets 10..29
  // First batch larger than max_bytes: nothing, or the whole batch.
  r = (*seg)->read(**first, int32_t(bs - 1), Offset(1000), false);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->size, 0);
  r = (*seg)->read(**first, int32_t(bs - 1), Offset(1000), true);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->size, bs);
  // Whole rest of the segment.
  r = (*seg)->read(**first, 1 << 20, Offset(1000), false);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->size, 18 * bs);
  // The region's bytes are the batches (offset 10 first).
  Bytes got(size_t(r->size));
  ASSERT_EQ(::pread(r->file->native_handle(), got.data(), got.size(), r->position), ssize_t(got.size()));
  EXPECT_TRUE(check_batch(ByteView(got).first(size_t(bs))).ok());
  EXPECT_EQ(RecordBatchHeader(got.data()).base_offset(), Offset(10));
}

TEST(SegmentTest, FindOffsetByTimestampIsRecordPrecise) {
  test::TempDir dir;
  LogConfig cfg = small_config();
  auto seg = Segment::create(test::files(), dir.path(), Offset(0), cfg, 0);
  ASSERT_TRUE(seg.ok());
  fill(**seg, 20, 5, 1000);  // batch i: timestamps 1000+10i .. +4, offsets 5i..5i+4
  auto t = (*seg)->find_offset_by_timestamp(1072);
  ASSERT_TRUE(t.ok() && t->has_value());
  EXPECT_EQ((*t)->offset, Offset(37));
  EXPECT_EQ((*t)->timestamp, 1072);
  t = (*seg)->find_offset_by_timestamp(1076);  // between batches 7 and 8
  ASSERT_TRUE(t.ok() && t->has_value());
  EXPECT_EQ((*t)->offset, Offset(40));
  t = (*seg)->find_offset_by_timestamp(0);
  ASSERT_TRUE(t.ok() && t->has_value());
  EXPECT_EQ((*t)->offset, Offset(0));
  t = (*seg)->find_offset_by_timestamp(5000);
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(t->has_value());
}

TEST(SegmentTest, TruncateToMidBatchRemovesThatBatch) {
  test::TempDir dir;
  LogConfig cfg = small_config();
  auto seg = Segment::create(test::files(), dir.path(), Offset(0), cfg, 0);
  ASSERT_TRUE(seg.ok());
  fill(**seg, 20, 5);
  int64_t bs = int64_t(make_batch(BatchSpec{Offset(0), 5, 0, 1, 20}).size());
  auto removed = (*seg)->truncate_to(Offset(52));
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(*removed, 10 * bs);
  EXPECT_EQ((*seg)->next_offset(), Offset(50));
  EXPECT_EQ((*seg)->size(), 10 * bs);
  fill(**seg, 3, 5);
  EXPECT_EQ((*seg)->next_offset(), Offset(65));
  ASSERT_TRUE((*seg)->finalize().ok());
  auto reopened = Segment::open(test::files(), dir.path(), Offset(0), cfg, 0);
  ASSERT_TRUE(reopened.ok());
  EXPECT_FALSE((*reopened)->needs_rebuild());
  EXPECT_EQ((*reopened)->next_offset(), Offset(65));
}

TEST(SegmentTest, RollRules) {
  test::TempDir dir;
  LogConfig cfg = small_config();
  cfg.segment_bytes = 1000;
  cfg.segment_ms = 100;
  auto seg = Segment::create(test::files(), dir.path(), Offset(0), cfg, 0);
  ASSERT_TRUE(seg.ok());
  EXPECT_FALSE((*seg)->should_roll(cfg, 5000, Offset(0), 0, 0));  // empty never rolls
  fill(**seg, 1, 1, 1000);
  EXPECT_FALSE((*seg)->should_roll(cfg, 100, Offset(1), 1050, 0));
  EXPECT_TRUE((*seg)->should_roll(cfg, 1000, Offset(1), 1050, 0));  // bytes
  EXPECT_TRUE((*seg)->should_roll(cfg, 100, Offset(1), 1101, 0));   // segment.ms by record time
  EXPECT_TRUE((*seg)->should_roll(cfg, 100, Offset(int64_t(1) << 31), 1050, 0));  // relative offset
}

}  // namespace
}  // namespace samsa

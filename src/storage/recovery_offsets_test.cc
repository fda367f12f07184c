// Recovery refuses a whole, CRC-valid batch whose offsets do not follow the
// batch before it (or do not fit the segment's int32 relative offsets) and
// truncates the .log at that batch's first byte: the refused batch is never
// served, and appends land right after the last verified batch. (Found by
// tests/fuzz log_recovery: the file used to keep the refused batch, which
// reads served and appends followed.)

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "base/clock.h"
#include "storage/log.h"
#include "storage/test_batches.h"

namespace samsa {
namespace {

using test::BatchSpec;
using test::make_batch;

const TopicPartition kTp{"recovery", PartitionId(0)};

Bytes region_bytes(const FileRegion& r) {
  Bytes out(size_t(r.size));
  if (r.size > 0) {
    EXPECT_EQ(::pread(r.file->native_handle(), out.data(), out.size(), r.position), ssize_t(out.size()));
  }
  return out;
}

void expect_refused_after_first(const Bytes& refused) {
  test::TempDir tmp;
  ManualClock clock(1'000'000);
  const std::filesystem::path dir = tmp.path() / kTp.to_string();
  std::filesystem::create_directories(dir);
  const Bytes first = make_batch(BatchSpec{Offset(0), 2});              // offsets 0..1
  const Bytes later = make_batch(BatchSpec{Offset(1'000), 1});          // valid, but after the refused one
  const std::filesystem::path log_file = Segment::log_path(dir, Offset(0));
  {
    std::ofstream out(log_file, std::ios::binary);
    for (const Bytes* b : {&first, &refused, &later}) out.write(reinterpret_cast<const char*>(b->data()), std::streamsize(b->size()));
  }

  auto log = Log::open(test::files(), dir, kTp, LogConfig{}, clock, RecoveryOptions{false, Offset(0)});
  ASSERT_TRUE(log.ok()) << log.error().to_string();
  EXPECT_EQ((*log)->log_end_offset(), Offset(2));
  EXPECT_EQ((*log)->load_stats().bytes_truncated, int64_t(refused.size() + later.size()));
  EXPECT_EQ(std::filesystem::file_size(log_file), first.size());
  auto all = (*log)->read(Offset(0), 1 << 20, Offset(INT64_MAX), true);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(region_bytes(all->records), first);

  Bytes next = make_batch(BatchSpec{Offset(0), 1});
  auto appended = (*log)->append(next.data(), next.size(), LeaderEpoch(0));
  ASSERT_TRUE(appended.ok()) << appended.error().to_string();
  EXPECT_EQ(appended->first_offset, Offset(2));
  auto back = (*log)->read(Offset(2), 1 << 20, Offset(INT64_MAX), true);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(region_bytes(back->records), next);  // the appended batch, right after the first
}

TEST(RecoveryOffsetsTest, BatchNotFollowingThePreviousOneIsTruncated) {
  expect_refused_after_first(make_batch(BatchSpec{Offset(1), 1}));  // offset 1 again
}

TEST(RecoveryOffsetsTest, BatchBeyondTheSegmentsRelativeOffsetsIsTruncated) {
  expect_refused_after_first(make_batch(BatchSpec{Offset(int64_t(1) << 32), 1}));
}

// Two segments on disk as a power loss can leave them: the older one lost
// its unsynced tail cleanly (no torn bytes), the newer one's writes survived.
// Returns the log opened from them, unclean, from recovery point 0.
std::unique_ptr<Log> open_with_lost_tail(const std::filesystem::path& dir, const LogConfig& config, Clock& clock) {
  std::filesystem::create_directories(dir);
  auto write = [](const std::filesystem::path& path, const Bytes& b) {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
  };
  write(Segment::log_path(dir, Offset(0)), make_batch(BatchSpec{Offset(0), 2}));     // 0..1; 2..9 lost
  write(Segment::log_path(dir, Offset(10)), make_batch(BatchSpec{Offset(10), 3}));   // 10..12
  auto log = Log::open(test::files(), dir, kTp, config, clock, RecoveryOptions{false, Offset(0)});
  EXPECT_TRUE(log.ok()) << log.error().to_string();
  return log.ok() ? std::move(*log) : nullptr;
}

TEST(RecoveryOffsetsTest, SegmentAfterALostTailIsDropped) {
  test::TempDir tmp;
  ManualClock clock(1'000'000);
  const std::filesystem::path dir = tmp.path() / kTp.to_string();
  auto log = open_with_lost_tail(dir, LogConfig{}, clock);
  ASSERT_TRUE(log);
  EXPECT_EQ(log->log_end_offset(), Offset(2));  // no hole: 10..12 went with 2..9
  EXPECT_EQ(log->load_stats().segments_dropped, 1);
  EXPECT_FALSE(std::filesystem::exists(Segment::log_path(dir, Offset(10))));
  Bytes next = make_batch(BatchSpec{Offset(0), 1});
  auto appended = log->append(next.data(), next.size(), LeaderEpoch(0));
  ASSERT_TRUE(appended.ok()) << appended.error().to_string();
  EXPECT_EQ(appended->first_offset, Offset(2));
}

TEST(RecoveryOffsetsTest, CompactedLogKeepsItsHoles) {
  test::TempDir tmp;
  ManualClock clock(1'000'000);
  LogConfig compacted;
  compacted.cleanup_policy.compact = true;  // the cleaner leaves such holes on purpose
  auto log = open_with_lost_tail(tmp.path() / kTp.to_string(), compacted, clock);
  ASSERT_TRUE(log);
  EXPECT_EQ(log->log_end_offset(), Offset(13));
  EXPECT_EQ(log->load_stats().segments_dropped, 0);
}

}  // namespace
}  // namespace samsa

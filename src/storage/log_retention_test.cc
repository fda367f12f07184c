// Retention and roll rules beyond the basics in log_test.cc: the active
// segment rolled when it expires, segments without timestamps aged by
// mtime, file.delete.delay.ms, segment.jitter.ms, runtime config changes.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <utime.h>

#include "storage/log.h"
#include "storage/test_batches.h"
#include "storage/test_records.h"

namespace samsa {
namespace {

namespace fs = std::filesystem;
using test::KV;

const TopicPartition kTp{"retained", PartitionId(1)};

struct Fixture {
  test::TempDir tmp;
  ManualClock clock{1'000'000};
  LogConfig config;
  std::unique_ptr<Log> log;
  Fixture() {
    config.segment_bytes = 1024;
    config.index_interval_bytes = 128;
    config.segment_index_bytes = 1024;
    config.file_delete_delay_ms = 0;
  }
  fs::path dir() const { return tmp.path() / kTp.to_string(); }
  void open(RecoveryOptions o = {}) {
    log.reset();
    auto l = Log::open(test::files(), dir(), kTp, config, clock, o);
    ASSERT_TRUE(l.ok()) << l.error().to_string();
    log = std::move(l).value();
  }
  void append(int n, int64_t ts) {
    for (int i = 0; i < n; ++i) test::append_kvs(*log, {KV{"k" + std::to_string(i), std::string(60, 'v')}}, ts);
  }
  int count_files(const std::string& suffix) {
    int n = 0;
    for (const auto& e : fs::directory_iterator(dir())) n += e.path().string().ends_with(suffix);
    return n;
  }
};

TEST(LogRetention, ExpiredActiveSegmentIsRolledAndDeleted) {
  Fixture f;
  f.config.retention_ms = 1000;
  f.open();
  f.append(30, 5000);
  ASSERT_GT(f.log->segment_count(), 1u);
  Offset end = f.log->log_end_offset();
  auto n = f.log->delete_old_segments(5000 + 1001);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(f.log->segment_count(), 1u);
  EXPECT_EQ(f.log->log_start_offset(), end);  // everything expired, the active segment too
  EXPECT_EQ(f.log->log_end_offset(), end);
  auto r = f.log->read(Offset(0), 1000, Offset(INT64_MAX), true);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kNotFound);  // OFFSET_OUT_OF_RANGE below the start
  f.append(1, 9000);  // offsets continue
  EXPECT_EQ(f.log->log_end_offset(), end + 1);
  // Not expired: the active segment stays.
  EXPECT_EQ(f.log->delete_old_segments(9000 + 999).value(), 0);
}

TEST(LogRetention, RetentionBytesZeroEmptiesTheLog) {
  Fixture f;
  f.config.retention_bytes = 0;
  f.open();
  f.append(30, 5000);
  ASSERT_TRUE(f.log->delete_old_segments(5000).ok());
  EXPECT_EQ(f.log->size_bytes(), 0);
  EXPECT_EQ(f.log->log_start_offset(), f.log->log_end_offset());
}

TEST(LogRetention, SegmentsWithoutTimestampsAgeByModificationTime) {
  Fixture f;
  f.config.retention_ms = 3'600'000;
  f.clock.set_ms(int64_t(::time(nullptr)) * 1000);
  f.open();
  for (int i = 0; i < 40; ++i) {
    Bytes b = test::make_batch(test::BatchSpec{Offset(0), 1, -1, 0, 60});  // timestamp -1
    ASSERT_TRUE(f.log->append(b.data(), b.size(), LeaderEpoch(1)).ok());
  }
  ASSERT_GT(f.log->segment_count(), 2u);
  EXPECT_EQ(f.log->delete_old_segments(f.clock.wall_ms()).value(), 0);  // files are new
  // Make the first segment's file two hours old.
  fs::path first = Segment::log_path(f.dir(), Offset(0));
  struct utimbuf old_times{::time(nullptr) - 7200, ::time(nullptr) - 7200};
  ASSERT_EQ(::utime(first.c_str(), &old_times), 0);
  EXPECT_EQ(f.log->delete_old_segments(f.clock.wall_ms()).value(), 1);
  EXPECT_GT(f.log->log_start_offset(), Offset(0));
}

TEST(LogRetention, FilesAreDeletedAfterFileDeleteDelay) {
  Fixture f;
  f.config.file_delete_delay_ms = 60'000;
  f.open();
  f.append(30, 5000);
  size_t segs = f.log->segment_count();
  Offset second = std::next(f.log->segments().begin())->first;
  // A reader holding a region of the first segment keeps reading it.
  auto held = f.log->read(Offset(0), 1 << 20, Offset(INT64_MAX), true);
  ASSERT_TRUE(held.ok());
  ASSERT_TRUE(f.log->advance_log_start_offset(second).ok());
  EXPECT_EQ(f.log->delete_old_segments(5000).value(), 1);
  EXPECT_EQ(f.log->segment_count(), segs - 1);
  EXPECT_EQ(f.count_files(".deleted"), 3);
  Bytes buf(size_t(held->records.size));
  EXPECT_EQ(::pread(held->records.file->native_handle(), buf.data(), buf.size(), held->records.position), ssize_t(buf.size()));
  ASSERT_TRUE(f.log->delete_pending_files(f.clock.monotonic_ms() + 59'999).ok());
  EXPECT_EQ(f.count_files(".deleted"), 3);
  ASSERT_TRUE(f.log->delete_pending_files(f.clock.monotonic_ms() + 60'000).ok());
  EXPECT_EQ(f.count_files(".deleted"), 0);
  // Leftovers of a crash are removed at open.
  ASSERT_TRUE(f.log->advance_log_start_offset(std::next(f.log->segments().begin())->first).ok());
  EXPECT_EQ(f.log->delete_old_segments(5000).value(), 1);
  EXPECT_EQ(f.count_files(".deleted"), 3);
  f.open();
  EXPECT_EQ(f.count_files(".deleted"), 0);
}

TEST(LogRetention, SegmentJitterRollsEarlierButNeverLater) {
  Fixture f;
  f.config.segment_bytes = 1 << 20;
  f.config.segment_ms = 10'000;
  f.config.segment_jitter_ms = 5'000;
  f.open();
  f.append(1, 100'000);
  f.append(1, 100'000 + 5'000);  // within segment.ms - max jitter: never rolls
  EXPECT_EQ(f.log->segment_count(), 1u);
  f.append(1, 100'000 + 10'001);  // past segment.ms: always rolls
  EXPECT_EQ(f.log->segment_count(), 2u);
}

TEST(LogRetention, ConfigChangesApplyAtRuntime) {
  Fixture f;
  f.config.segment_bytes = 1 << 20;
  f.open();
  f.append(20, 5000);
  EXPECT_EQ(f.log->segment_count(), 1u);
  LogConfig c = f.config;
  c.segment_bytes = 512;
  c.retention_bytes = 2048;
  f.log->set_config(c);
  f.append(40, 5000);
  EXPECT_GT(f.log->segment_count(), 4u);
  ASSERT_TRUE(f.log->delete_old_segments(5000).ok());
  EXPECT_LE(f.log->size_bytes(), 2048 + 512);
  c.retention_bytes = -1;
  c.flush_messages = 1;
  f.log->set_config(c);
  f.append(1, 5000);
  EXPECT_EQ(f.log->recovery_point(), f.log->log_end_offset());
}

}  // namespace
}  // namespace samsa

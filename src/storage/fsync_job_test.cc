// Rolled-segment fsyncs and checkpoint writes on a BlockingExecutor: what
// the Log and the LogManager do with their outcomes (the executors
// themselves are tested in io/thread_blocking_executor_test.cc).
#include "storage/fsync_job.h"

#include <gtest/gtest.h>

#include "storage/log.h"
#include "storage/log_manager.h"
#include "storage/test_batches.h"

namespace samsa {
namespace {

using test::BatchSpec;
using test::make_batch;

const TopicPartition kTp{"rolls", PartitionId(0)};

// Keeps the work until the test runs it: the moment a background fsync
// finishes is the test's to choose.
class DeferredWorker final : public BlockingExecutor {
 public:
  void submit(Work work, Done done) override { pending.emplace_back(std::move(work), std::move(done)); }
  void drain() override { run_all(); }
  void run_all() {
    auto jobs = std::move(pending);
    pending.clear();
    for (auto& [work, done] : jobs) done(work());
  }
  void fail_all(Error error) {
    auto jobs = std::move(pending);
    pending.clear();
    for (auto& [work, done] : jobs) done(error);
  }
  std::vector<std::pair<Work, Done>> pending;
};

struct Fixture {
  test::TempDir tmp;
  ManualClock clock{1'000'000};
  DeferredWorker worker;
  std::unique_ptr<Log> log;

  Fixture() {
    LogConfig c;
    c.segment_bytes = 2048;
    c.index_interval_bytes = 128;
    c.segment_index_bytes = 1024;
    auto opened = Log::open(test::files(), tmp.path() / kTp.to_string(), kTp, c, clock, RecoveryOptions{});
    EXPECT_TRUE(opened.ok());
    log = std::move(opened).value();
    log->set_blocking_executor(worker);
  }

  // Appends until the log has rolled at least once.
  Status append_past_a_roll() {
    for (int i = 0; log->segment_count() < 2; ++i) {
      Bytes b = make_batch(BatchSpec{Offset(0), 3, 5000 + i, 1, 60, uint8_t('a' + i % 26)});
      auto r = log->append(b.data(), b.size(), LeaderEpoch(1));
      if (!r.ok()) return r.error();
    }
    return ok_status();
  }
};

TEST(BackgroundFsyncTest, RecoveryPointMovesOnlyWhenTheRolledSegmentIsDurable) {
  Fixture f;
  ASSERT_TRUE(f.append_past_a_roll().ok());
  ASSERT_EQ(f.worker.pending.size(), 1u);
  EXPECT_EQ(f.log->recovery_point(), Offset(0));  // the roll did not wait for the fsync
  f.worker.run_all();
  EXPECT_EQ(f.log->recovery_point(), f.log->active_segment_base());
  EXPECT_GT(f.log->recovery_point(), Offset(0));
}

TEST(BackgroundFsyncTest, AFailedBackgroundFsyncTakesTheLogOffline) {
  Fixture f;
  ASSERT_TRUE(f.append_past_a_roll().ok());
  f.worker.fail_all(Error(ErrorKind::kIo, "fsync: Input/output error"));
  EXPECT_EQ(f.log->recovery_point(), Offset(0));
  Bytes b = make_batch(BatchSpec{Offset(0), 1, 9000, 1, 10, uint8_t('z')});
  EXPECT_FALSE(f.log->append(b.data(), b.size(), LeaderEpoch(1)).ok());
}

TEST(BackgroundFsyncTest, AnOutcomeArrivingAfterTheLogIsGoneIsDropped) {
  Fixture f;
  ASSERT_TRUE(f.append_past_a_roll().ok());
  f.log.reset();
  f.worker.run_all();  // the job still holds its files; the callback must not touch the Log
  SUCCEED();
}

TEST(BackgroundFsyncTest, CloseFlushesWhatABackgroundJobHasNotYet) {
  Fixture f;
  ASSERT_TRUE(f.append_past_a_roll().ok());
  ASSERT_TRUE(f.log->close().ok());
  EXPECT_EQ(f.log->recovery_point(), f.log->log_end_offset());
  f.worker.run_all();  // late: harmless
  EXPECT_EQ(f.log->recovery_point(), f.log->log_end_offset());
}

TEST(BackgroundFsyncTest, CheckpointFilesAreWrittenByTheWorker) {
  test::TempDir tmp;
  ManualClock clock{1'000'000};
  LogManagerConfig config;
  config.log_dirs = {tmp.path() / "d"};
  auto manager = LogManager::open(test::files(), config, LogConfig{}, clock);
  ASSERT_TRUE(manager.ok());
  DeferredWorker worker;
  (*manager)->set_blocking_executor(worker);
  ASSERT_TRUE((*manager)->create_log(kTp, LogConfig{}).ok());
  auto file = tmp.path() / "d" / kRecoveryPointCheckpointFile;
  std::filesystem::remove(file);
  ASSERT_TRUE((*manager)->write_recovery_point_checkpoints().ok());
  EXPECT_FALSE(std::filesystem::exists(file));  // not on this thread
  ASSERT_EQ(worker.pending.size(), 1u);
  worker.run_all();
  EXPECT_TRUE(std::filesystem::exists(file));
  (*manager)->set_blocking_executor(inline_blocking_executor());
  EXPECT_TRUE((*manager)->close().ok());
}

TEST(BackgroundFsyncTest, JobsHoldTheirFiles) {
  test::TempDir tmp;
  auto path = tmp.path() / "f";
  auto file = test::files().open(path, OpenMode::kCreate);
  ASSERT_TRUE(file.ok());
  FsyncJob job(test::files(), {*file}, tmp.path());
  file->reset();
  ASSERT_TRUE(test::files().remove(path).ok());  // retention deleted the segment meanwhile
  EXPECT_TRUE(job.run().ok());
  EXPECT_FALSE(FsyncJob(test::files(), {}, tmp.path() / "missing").run().ok());
}

TEST(BackgroundFsyncTest, ASuccessAfterAFailedRollDoesNotMoveTheRecoveryPoint) {
  Fixture f;
  ASSERT_TRUE(f.append_past_a_roll().ok());
  auto first = std::move(f.worker.pending);
  f.worker.pending.clear();
  while (f.log->segment_count() < 3) {  // a second roll
    Bytes b = make_batch(BatchSpec{Offset(0), 3, 7000, 1, 60, uint8_t('q')});
    ASSERT_TRUE(f.log->append(b.data(), b.size(), LeaderEpoch(1)).ok());
  }
  ASSERT_FALSE(f.worker.pending.empty());
  first[0].second(Error(ErrorKind::kIo, "fsync: Input/output error"));  // roll 1 failed
  f.worker.run_all();                                                    // roll 2 succeeded
  EXPECT_EQ(f.log->recovery_point(), Offset(0));
}

TEST(BackgroundFsyncTest, AFailureAfterAFlushTakesTheRecoveryPointBack) {
  Fixture f;
  ASSERT_TRUE(f.append_past_a_roll().ok());
  ASSERT_TRUE(f.log->flush().ok());  // flush.ms: claims everything up to the end
  EXPECT_EQ(f.log->recovery_point(), f.log->log_end_offset());
  f.worker.fail_all(Error(ErrorKind::kIo, "fsync: Input/output error"));
  EXPECT_EQ(f.log->recovery_point(), Offset(0));  // the rolled segment's start
}

TEST(BackgroundFsyncTest, ALateSuccessClaimsNothingAfterATruncation) {
  Fixture f;
  ASSERT_TRUE(f.append_past_a_roll().ok());
  Offset rolled_at = f.log->active_segment_base();
  ASSERT_TRUE(f.log->truncate_to(Offset(3)).ok());
  while (f.log->log_end_offset() <= rolled_at) {  // rewritten past the old roll, not fsynced
    Bytes b = make_batch(BatchSpec{Offset(0), 3, 8000, 1, 10, uint8_t('t')});
    ASSERT_TRUE(f.log->append(b.data(), b.size(), LeaderEpoch(2)).ok());
  }
  f.worker.run_all();
  EXPECT_LE(f.log->recovery_point(), Offset(3));
}

}  // namespace
}  // namespace samsa

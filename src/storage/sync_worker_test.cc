#include "storage/sync_worker.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <thread>

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
class DeferredWorker final : public SyncWorker {
 public:
  void submit(Work work, Done done) override { pending.emplace_back(std::move(work), std::move(done)); }
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
    auto opened = Log::open(tmp.path() / kTp.to_string(), kTp, c, clock, RecoveryOptions{});
    EXPECT_TRUE(opened.ok());
    log = std::move(opened).value();
    log->set_sync_worker(worker);
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

TEST(SyncWorkerTest, RecoveryPointMovesOnlyWhenTheRolledSegmentIsDurable) {
  Fixture f;
  ASSERT_TRUE(f.append_past_a_roll().ok());
  ASSERT_EQ(f.worker.pending.size(), 1u);
  EXPECT_EQ(f.log->recovery_point(), Offset(0));  // the roll did not wait for the fsync
  f.worker.run_all();
  EXPECT_EQ(f.log->recovery_point(), f.log->active_segment_base());
  EXPECT_GT(f.log->recovery_point(), Offset(0));
}

TEST(SyncWorkerTest, AFailedBackgroundFsyncTakesTheLogOffline) {
  Fixture f;
  ASSERT_TRUE(f.append_past_a_roll().ok());
  f.worker.fail_all(Error(ErrorKind::kIo, "fsync: Input/output error"));
  EXPECT_EQ(f.log->recovery_point(), Offset(0));
  Bytes b = make_batch(BatchSpec{Offset(0), 1, 9000, 1, 10, uint8_t('z')});
  EXPECT_FALSE(f.log->append(b.data(), b.size(), LeaderEpoch(1)).ok());
}

TEST(SyncWorkerTest, AnOutcomeArrivingAfterTheLogIsGoneIsDropped) {
  Fixture f;
  ASSERT_TRUE(f.append_past_a_roll().ok());
  f.log.reset();
  f.worker.run_all();  // the job still owns its descriptors; the callback must not touch the Log
  SUCCEED();
}

TEST(SyncWorkerTest, CloseFlushesWhatABackgroundJobHasNotYet) {
  Fixture f;
  ASSERT_TRUE(f.append_past_a_roll().ok());
  ASSERT_TRUE(f.log->close().ok());
  EXPECT_EQ(f.log->recovery_point(), f.log->log_end_offset());
  f.worker.run_all();  // late: harmless
  EXPECT_EQ(f.log->recovery_point(), f.log->log_end_offset());
}

TEST(SyncWorkerTest, CheckpointFilesAreWrittenByTheWorker) {
  test::TempDir tmp;
  ManualClock clock{1'000'000};
  LogManagerConfig config;
  config.log_dirs = {tmp.path() / "d"};
  auto manager = LogManager::open(config, LogConfig{}, clock);
  ASSERT_TRUE(manager.ok());
  DeferredWorker worker;
  (*manager)->set_sync_worker(worker);
  ASSERT_TRUE((*manager)->create_log(kTp, LogConfig{}).ok());
  auto file = tmp.path() / "d" / kRecoveryPointCheckpointFile;
  std::filesystem::remove(file);
  ASSERT_TRUE((*manager)->write_recovery_point_checkpoints().ok());
  EXPECT_FALSE(std::filesystem::exists(file));  // not on this thread
  ASSERT_EQ(worker.pending.size(), 1u);
  worker.run_all();
  EXPECT_TRUE(std::filesystem::exists(file));
  (*manager)->set_sync_worker(inline_sync_worker());
  EXPECT_TRUE((*manager)->close().ok());
}

TEST(SyncWorkerTest, JobsOpenTheirOwnDescriptors) {
  test::TempDir tmp;
  auto path = tmp.path() / "f";
  int fd = ::open(path.c_str(), O_CREAT | O_RDWR, 0600);
  ASSERT_GE(fd, 0);
  auto job = FsyncJob::of({path}, tmp.path());
  ASSERT_TRUE(job.ok());
  ::close(fd);
  std::filesystem::remove(path);  // retention deleted the segment meanwhile
  EXPECT_TRUE((*job)->run().ok());
  EXPECT_FALSE(FsyncJob::of({tmp.path() / "missing"}, tmp.path()).ok());
}

TEST(SyncWorkerTest, ASuccessAfterAFailedRollDoesNotMoveTheRecoveryPoint) {
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

TEST(SyncWorkerTest, AFailureAfterAFlushTakesTheRecoveryPointBack) {
  Fixture f;
  ASSERT_TRUE(f.append_past_a_roll().ok());
  ASSERT_TRUE(f.log->flush().ok());  // flush.ms: claims everything up to the end
  EXPECT_EQ(f.log->recovery_point(), f.log->log_end_offset());
  f.worker.fail_all(Error(ErrorKind::kIo, "fsync: Input/output error"));
  EXPECT_EQ(f.log->recovery_point(), Offset(0));  // the rolled segment's start
}

TEST(SyncWorkerTest, ALateSuccessClaimsNothingAfterATruncation) {
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

TEST(SyncWorkerTest, StopAndDeliverHandsOverOutcomesTheLoopNeverRan) {
  std::vector<Status> delivered;
  {
    ThreadSyncWorker worker([](std::function<void()>) {});  // a loop that has stopped
    worker.submit([] { return Status(Error(ErrorKind::kIo, "fsync: Input/output error")); },
                  [&delivered](Status st) { delivered.push_back(st); });
    worker.submit([] { return ok_status(); }, [&delivered](Status st) { delivered.push_back(st); });
    worker.stop_and_deliver();
    ASSERT_EQ(delivered.size(), 2u);  // on this thread, before any close()
    EXPECT_FALSE(delivered[0].ok());
    EXPECT_TRUE(delivered[1].ok());
  }
  EXPECT_EQ(delivered.size(), 2u);  // the destructor delivers nothing twice
}

TEST(SyncWorkerTest, AThrowingWorkIsAnOutcome) {
  std::vector<Status> delivered;
  ThreadSyncWorker worker([](std::function<void()>) {});
  worker.submit([]() -> Status { throw std::runtime_error("boom"); },
                [&delivered](Status st) { delivered.push_back(st); });
  worker.stop_and_deliver();
  ASSERT_EQ(delivered.size(), 1u);
  EXPECT_FALSE(delivered[0].ok());
}

TEST(SyncWorkerTest, ThreadWorkerRunsWorkElsewhereAndPostsOutcomesInOrder) {
  test::TempDir tmp;
  std::mutex mu;
  std::vector<std::function<void()>> posted;
  std::vector<int> outcomes;
  const auto caller = std::this_thread::get_id();
  std::atomic<int> off_thread{0};
  {
    ThreadSyncWorker worker([&](std::function<void()> task) {
      if (std::this_thread::get_id() != caller) ++off_thread;
      std::lock_guard lock(mu);
      posted.push_back(std::move(task));
    });
    for (int i = 0; i < 5; ++i) {
      auto job = FsyncJob::of({}, tmp.path());
      ASSERT_TRUE(job.ok());
      worker.submit([job = *job] { return job->run(); }, [&outcomes, i](Status st) {
        EXPECT_TRUE(st.ok());
        outcomes.push_back(i);
      });
    }
  }  // the destructor runs what was submitted, then joins
  EXPECT_EQ(off_thread.load(), 5);
  ASSERT_EQ(posted.size(), 5u);
  for (auto& task : posted) task();  // the owner's loop runs them
  EXPECT_EQ(outcomes, (std::vector<int>{0, 1, 2, 3, 4}));
}

}  // namespace
}  // namespace samsa

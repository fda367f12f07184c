// A full disk (ENOSPC injected with test::FaultyFileSystem) at every
// write an append can make: the .log data (whole or torn, with or without
// the cut of the torn tail failing too), an index entry, the files of a new
// segment at a roll, the leader-epoch checkpoint. Each time: the append
// fails with kNoSpace; the log is out of space, not offline; every
// acknowledged record is still read; no byte of the failed append is left;
// appends are refused without touching the disk until the retry time; then
// the next append succeeds at the next offset, and a restart after a crash
// serves exactly the acknowledged records.

#include <gtest/gtest.h>

#include <cerrno>
#include <functional>

#include "storage/log.h"
#include "storage/test_batches.h"
#include "storage/test_faulty_file_system.h"
#include "storage/test_records.h"

namespace samsa {
namespace {

namespace fs = std::filesystem;
using test::FileOp;
using test::KV;

const TopicPartition kTp{"full", PartitionId(0)};

struct Site {
  const char* name;
  // The injected errno for (op, path), 0 to let the operation through.
  std::function<int(FileOp, const fs::path&)> fault;
  LeaderEpoch epoch{1};  // of the appends while the fault is armed
};

std::vector<Site> sites() {
  auto log_write = [](int e) {
    return [e](FileOp op, const fs::path& p) { return op == FileOp::kWrite && p.extension() == ".log" ? e : 0; };
  };
  return {
      {"whole .log write", log_write(ENOSPC)},
      {"torn .log write", log_write(-ENOSPC)},
      {"torn .log write, cut fails",
       [](FileOp op, const fs::path& p) {
         if (p.extension() != ".log") return 0;
         return op == FileOp::kWrite ? -ENOSPC : op == FileOp::kTruncate ? EIO : 0;
       }},
      {"index entry write",
       [](FileOp op, const fs::path& p) { return op == FileOp::kWrite && p.extension() == ".index" ? ENOSPC : 0; }},
      {"new segment at a roll",
       [](FileOp op, const fs::path& p) { return op == FileOp::kOpen && p.extension() == ".log" ? ENOSPC : 0; }},
      {"leader-epoch checkpoint",
       [](FileOp op, const fs::path& p) {
         return op == FileOp::kWrite && p.filename().string().starts_with(kLeaderEpochCheckpointFile) ? ENOSPC : 0;
       },
       LeaderEpoch(2)},
  };
}

struct Fixture {
  test::TempDir tmp;
  test::FaultyFileSystem files{test::files()};
  ManualClock clock{70'000'000};
  LogConfig config;
  std::unique_ptr<Log> log;
  int next_value = 0;

  Fixture() {
    config.segment_bytes = 900;  // rolls every few appends
    config.index_interval_bytes = 100;
    config.segment_index_bytes = 400;
  }
  fs::path dir() const { return tmp.path() / kTp.to_string(); }
  void open() {
    log.reset();
    auto l = Log::open(files, dir(), kTp, config, clock, RecoveryOptions{});
    ASSERT_TRUE(l.ok()) << l.error().to_string();
    log = std::move(l).value();
  }
  Result<AppendResult> append(LeaderEpoch epoch = LeaderEpoch(1)) {
    std::string v = "v" + std::to_string(next_value++);
    Bytes b = test::keyed_batch({KV{"k", v}, KV{"k2", v + "-second"}}, clock.wall_ms());
    return log->append(b.data(), b.size(), epoch);
  }
  // Bytes in the .log files beyond what the segments hold (a torn tail).
  int64_t stray_bytes() const {
    int64_t on_disk = 0;
    for (const auto& entry : fs::directory_iterator(dir())) {
      if (entry.path().extension() == ".log") on_disk += int64_t(fs::file_size(entry.path()));
    }
    return on_disk - log->size_bytes();
  }
};

// Counts file operations while installed: a refused append must not try.
struct OpCounter {
  test::FaultyFileSystem& files;
  int ops = 0;
  explicit OpCounter(test::FaultyFileSystem& f) : files(f) {
    files.set_hook([this](FileOp, const fs::path&) {
      ++ops;
      return 0;
    });
  }
  ~OpCounter() { files.clear_hook(); }
};

TEST(OutOfSpace, AppendFailsCleanlyReadsGoOnAndWritesResumeOnceSpaceIsBack) {
  for (const Site& site : sites()) {
    SCOPED_TRACE(site.name);
    Fixture f;
    f.open();
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(f.append().ok());
    // The fault stays armed until an append hits it (an index entry or a
    // roll is due only every few appends).
    f.files.set_hook(site.fault);
    std::vector<test::ReadRecord> acked = test::read_all(*f.log);
    std::optional<Error> failure;
    for (int i = 0; i < 40 && !failure; ++i) {
      acked = test::read_all(*f.log);
      auto r = f.append(site.epoch);
      if (!r.ok()) failure = r.error();
    }
    f.files.clear_hook();
    ASSERT_TRUE(failure.has_value()) << "the fault was never hit";
    EXPECT_EQ(failure->kind(), ErrorKind::kNoSpace) << failure->to_string();
    EXPECT_TRUE(f.log->out_of_space());
    EXPECT_FALSE(f.log->offline());
    const Offset end = f.log->log_end_offset();
    ASSERT_EQ(end.value(), int64_t(acked.size()));

    // Reads go on; nothing of the failed append is visible.
    EXPECT_EQ(test::read_all(*f.log), acked);
    bool cut_failed = std::string(site.name).find("cut fails") != std::string::npos;
    if (cut_failed) {
      EXPECT_GT(f.stray_bytes(), 0);  // cut at the retry, before writing
    } else {
      EXPECT_EQ(f.stray_bytes(), 0);
    }

    // Until the retry time, appends are refused without a file operation.
    {
      OpCounter counter(f.files);
      auto refused = f.append();
      ASSERT_FALSE(refused.ok());
      EXPECT_EQ(refused.error().kind(), ErrorKind::kNoSpace);
      EXPECT_EQ(counter.ops, 0);
    }

    // Space is back: the next append after the retry time succeeds at the
    // next offset, and the log is writable again.
    f.clock.advance_ms(Log::kOutOfSpaceRetryMs);
    auto resumed = f.append(site.epoch);
    ASSERT_TRUE(resumed.ok()) << resumed.error().to_string();
    EXPECT_EQ(resumed->first_offset, end);
    EXPECT_FALSE(f.log->out_of_space());
    EXPECT_EQ(f.stray_bytes(), 0);
    for (int i = 0; i < 12; ++i) ASSERT_TRUE(f.append(site.epoch).ok());  // rolls again
    std::vector<test::ReadRecord> all = test::read_all(*f.log);
    ASSERT_EQ(all.size(), acked.size() + 2 * 13);
    EXPECT_TRUE(std::equal(acked.begin(), acked.end(), all.begin()));
    for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i].offset, int64_t(i));

    // Recovery after a crash (no clean close) finds exactly the same.
    f.open();
    EXPECT_EQ(test::read_all(*f.log), all);
    if (site.epoch == LeaderEpoch(2)) {
      ASSERT_FALSE(f.log->leader_epochs().empty());
      EXPECT_EQ(f.log->leader_epochs().back(), (EpochEntry{LeaderEpoch(2), end}));
    }
  }
}

// Still full at the retry: the append fails again, cleanly, and the next
// retry waits another interval.
TEST(OutOfSpace, StillFullAtTheRetryFailsAgainCleanly) {
  Fixture f;
  f.open();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(f.append().ok());
  auto acked = test::read_all(*f.log);
  f.files.set_hook([](FileOp op, const fs::path&) { return op == FileOp::kWrite ? -ENOSPC : 0; });
  EXPECT_FALSE(f.append().ok());
  f.clock.advance_ms(Log::kOutOfSpaceRetryMs);
  auto again = f.append();
  f.files.clear_hook();
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().kind(), ErrorKind::kNoSpace);
  EXPECT_TRUE(f.log->out_of_space());
  EXPECT_EQ(f.stray_bytes(), 0);
  EXPECT_EQ(test::read_all(*f.log), acked);
  f.clock.advance_ms(Log::kOutOfSpaceRetryMs - 1);
  EXPECT_FALSE(f.append().ok());  // the interval restarted at the failed retry
  f.clock.advance_ms(1);
  ASSERT_TRUE(f.append().ok());
}

// EIO while out of space still takes the log offline for good.
TEST(OutOfSpace, AnIoErrorAtTheRetryTakesTheLogOffline) {
  Fixture f;
  f.open();
  ASSERT_TRUE(f.append().ok());
  f.files.set_hook([](FileOp op, const fs::path&) { return op == FileOp::kWrite ? ENOSPC : 0; });
  EXPECT_FALSE(f.append().ok());
  f.files.set_hook([](FileOp op, const fs::path&) { return op == FileOp::kWrite ? EIO : 0; });
  f.clock.advance_ms(Log::kOutOfSpaceRetryMs);
  auto r = f.append();
  f.files.clear_hook();
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(f.log->offline());
  f.clock.advance_ms(Log::kOutOfSpaceRetryMs);
  EXPECT_FALSE(f.append().ok());
  EXPECT_FALSE(f.log->read(Offset(0), 1000, Offset(1000), true).ok());
}

}  // namespace
}  // namespace samsa

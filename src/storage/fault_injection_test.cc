// Deterministic fault injection (test::FaultyFileSystem): a "crash" at
// every file operation of a roll, a retention deletion and a compaction
// swap; ENOSPC / EIO on writes and fsyncs; damaged checkpoint files. After
// each, the log is reopened as after kill -9 and must serve exactly a valid
// prefix (or suffix, for retention) of what was written, every batch
// passing its CRC (test::read_all checks).

#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "storage/log.h"
#include "storage/log_cleaner.h"
#include "storage/log_manager.h"
#include "storage/test_batches.h"
#include "storage/test_faulty_file_system.h"
#include "storage/test_records.h"

namespace samsa {
namespace {

namespace fs = std::filesystem;
using test::KV;
using test::ReadRecord;

const TopicPartition kTp{"faulty", PartitionId(0)};

// Kills the "process" at the n-th mutating file operation (1-based): that
// operation and every later one fail with EIO, as nothing runs after a
// crash. ops() counts the operations attempted.
class Crash {
 public:
  Crash(test::FaultyFileSystem& files, int64_t at) : files_(files), at_(at) {
    files_.set_hook([this](test::FileOp, const fs::path&) {
      ++ops_;
      return (at_ > 0 && ops_ >= at_) ? EIO : 0;
    });
  }
  ~Crash() { files_.clear_hook(); }
  int64_t ops() const { return ops_; }
  bool crashed() const { return at_ > 0 && ops_ >= at_; }

 private:
  test::FaultyFileSystem& files_;
  int64_t at_;
  int64_t ops_ = 0;
};

LogConfig small_config() {
  LogConfig c;
  c.segment_bytes = 900;
  c.index_interval_bytes = 100;
  c.segment_index_bytes = 400;
  return c;
}

struct Fixture {
  test::TempDir tmp;
  test::FaultyFileSystem files{test::files()};
  ManualClock clock{50'000'000};
  LogConfig config = small_config();
  std::unique_ptr<Log> log;

  fs::path dir() const { return tmp.path() / kTp.to_string(); }
  void open(RecoveryOptions opts = {}) {
    log.reset();
    auto l = Log::open(files, dir(), kTp, config, clock, opts);
    ASSERT_TRUE(l.ok()) << l.error().to_string();
    log = std::move(l).value();
  }
  // Batch i: keys k(i%7), k((i+1)%7), values naming i.
  Status append(int i) {
    Bytes b = test::keyed_batch({KV{"k" + std::to_string(i % 7), "v" + std::to_string(i)},
                                 KV{"k" + std::to_string((i + 1) % 7), "w" + std::to_string(i)}},
                                clock.wall_ms());
    auto r = log->append(b.data(), b.size(), LeaderEpoch(1));
    return r.ok() ? ok_status() : Status(r.error());
  }
};

bool is_prefix(const std::vector<ReadRecord>& got, const std::vector<ReadRecord>& all) {
  if (got.size() > all.size()) return false;
  return std::equal(got.begin(), got.end(), all.begin());
}

// Crash at every operation of an append that rolls the segment (finalize
// the old segment, create the new files, fsyncs).
TEST(FaultInjection, CrashAtEveryOperationOfARoll) {
  int64_t total_ops = -1;
  for (int64_t n = 1; total_ops < 0 || n <= total_ops; ++n) {
    Fixture f;
    f.open();
    int i = 0;
    while (f.log->segment_count() == 1) ASSERT_TRUE(f.append(i++).ok());
    // Fill the second segment up to the point where the next append rolls.
    size_t segs = f.log->segment_count();
    std::vector<ReadRecord> before;
    int rolled_at = -1;
    for (int j = i; j < i + 50; ++j) {
      ASSERT_TRUE(f.log->flush().ok());
      fs::path probe = f.tmp.path() / "probe";
      fs::remove_all(probe);
      fs::copy(f.dir(), probe);
      ASSERT_TRUE(f.append(j).ok());
      if (f.log->segment_count() > segs) {
        rolled_at = j;
        break;
      }
    }
    ASSERT_GE(rolled_at, 0);
    // Rebuild the state just before the rolling append, then crash in it.
    f.log.reset();
    fs::remove_all(f.dir());
    fs::copy(f.tmp.path() / "probe", f.dir());
    f.open(RecoveryOptions{});
    before = test::read_all(*f.log);
    Offset recovery_point = f.log->recovery_point();
    {
      Crash crash(f.files, total_ops < 0 ? 0 : n);
      Status st = f.append(rolled_at);
      if (total_ops < 0) {
        ASSERT_TRUE(st.ok());
        total_ops = crash.ops();
        ASSERT_GT(total_ops, 3);
      } else {
        EXPECT_FALSE(st.ok()) << "op " << n;
      }
      f.log.reset();  // the process dies: nothing is closed
    }
    std::vector<ReadRecord> all = before;
    all.push_back(ReadRecord{before.back().offset + 1, "k" + std::to_string(rolled_at % 7), "v" + std::to_string(rolled_at)});
    all.push_back(ReadRecord{before.back().offset + 2, "k" + std::to_string((rolled_at + 1) % 7), "w" + std::to_string(rolled_at)});
    f.open(RecoveryOptions{.recovery_point = recovery_point});
    auto got = test::read_all(*f.log);
    EXPECT_TRUE(is_prefix(got, all)) << "crash at op " << n;
    EXPECT_GE(got.size(), before.size()) << "crash at op " << n << " lost acknowledged data";
    EXPECT_EQ(f.log->log_end_offset(), Offset(got.back().offset + 1));
    ASSERT_TRUE(f.append(1000).ok()) << "op " << n;  // and the log is writable again
  }
}

// Crash at every operation of a retention deletion of three segments.
TEST(FaultInjection, CrashAtEveryOperationOfRetentionDeletion) {
  int64_t total_ops = -1;
  for (int64_t n = 1; total_ops < 0 || n <= total_ops; ++n) {
    Fixture f;
    f.open();
    for (int i = 0; f.log->segment_count() < 6; ++i) ASSERT_TRUE(f.append(i).ok());
    ASSERT_TRUE(f.log->flush().ok());
    auto all = test::read_all(*f.log);
    auto it = f.log->segments().begin();
    std::advance(it, 3);
    Offset new_start = it->first;
    ASSERT_TRUE(f.log->advance_log_start_offset(new_start).ok());
    {
      Crash crash(f.files, total_ops < 0 ? 0 : n);
      auto deleted = f.log->delete_old_segments(f.clock.wall_ms());
      if (total_ops < 0) {
        ASSERT_TRUE(deleted.ok());
        ASSERT_EQ(*deleted, 3);
        total_ops = crash.ops();
      }
      f.log.reset();
    }
    // The log start checkpoint may or may not have been written: both.
    for (Offset start : {Offset(0), new_start}) {
      f.open(RecoveryOptions{.recovery_point = Offset(all.back().offset + 1), .log_start_offset = start});
      auto got = test::read_all(*f.log);
      // A suffix of whole segments, ending where the log ended.
      ASSERT_FALSE(got.empty());
      EXPECT_EQ(got.back(), all.back()) << "op " << n;
      auto first = std::find(all.begin(), all.end(), got.front());
      ASSERT_NE(first, all.end()) << "op " << n;
      EXPECT_TRUE(std::equal(got.begin(), got.end(), first)) << "op " << n;
      EXPECT_LE(got.front().offset, new_start.value()) << "op " << n;
      if (start == new_start) {
        EXPECT_EQ(got.front().offset, new_start.value());
      }
      EXPECT_GE(f.log->log_start_offset(), start);
    }
  }
}

// Crash at every operation of a compaction pass (writing the copies,
// fsyncs, renames of the swap, index rebuilds).
TEST(FaultInjection, CrashAtEveryOperationOfCompaction) {
  int64_t total_ops = -1;
  for (int64_t n = 1; total_ops < 0 || n <= total_ops; ++n) {
    Fixture f;
    f.config.cleanup_policy = CleanupPolicy{.delete_segments = false, .compact = true};
    f.config.min_cleanable_dirty_ratio = 0.01;
    f.open();
    for (int i = 0; f.log->segment_count() < 5; ++i) ASSERT_TRUE(f.append(i).ok());
    ASSERT_TRUE(f.log->flush().ok());
    auto all = test::read_all(*f.log);
    std::map<std::string, ReadRecord> latest;
    for (const auto& r : all) latest[*r.key] = r;
    {
      LogCleaner cleaner(CleanerConfig{});
      Crash crash(f.files, total_ops < 0 ? 0 : n);
      Status st = cleaner.clean_all({f.log.get()}, [&](const TopicPartition&) { return f.log.get(); },
                                    f.clock.wall_ms());
      if (total_ops < 0) {
        ASSERT_TRUE(st.ok()) << st.error().to_string();
        ASSERT_GT(cleaner.stats().segments_replaced, 1);
        total_ops = crash.ops();
      }
      f.log.reset();
    }
    f.open(RecoveryOptions{.recovery_point = Offset(all.back().offset + 1)});
    auto got = test::read_all(*f.log);
    std::map<int64_t, ReadRecord> by_offset;
    for (const auto& r : all) by_offset[r.offset] = r;
    std::map<std::string, ReadRecord> got_latest;
    for (const auto& r : got) {
      ASSERT_TRUE(by_offset.count(r.offset)) << "op " << n;
      EXPECT_EQ(by_offset[r.offset], r) << "op " << n;  // an original record at its offset
      got_latest[*r.key] = r;
    }
    EXPECT_EQ(got_latest, latest) << "op " << n;  // every key's latest value survives
    EXPECT_EQ(f.log->log_end_offset(), Offset(all.back().offset + 1));
    for (const auto& e : fs::directory_iterator(f.dir())) {
      std::string name = e.path().filename().string();
      EXPECT_FALSE(name.ends_with(".swap") || name.ends_with(".cleaned")) << name << " op " << n;
    }
  }
}

// EIO on a write, whole or torn: the append fails with kIo, the log goes
// offline (appends and reads refused), nothing acknowledged is damaged, and
// after a restart the log serves exactly the acknowledged records and
// accepts appends again. (ENOSPC is recoverable without a restart:
// out_of_space_test.cc.)
TEST(FaultInjection, IoErrorOnAppendTakesTheLogOfflineWithoutDamage) {
  for (int mode : {EIO, -EIO}) {
    Fixture f;
    f.open();
    for (int i = 0; i < 20; ++i) ASSERT_TRUE(f.append(i).ok());
    auto acked = test::read_all(*f.log);
    {
      f.files.set_hook([mode](test::FileOp op, const fs::path& p) {
        return op == test::FileOp::kWrite && p.extension() == ".log" ? mode : 0;
      });
      Bytes b = test::keyed_batch({KV{"x", "lost"}}, f.clock.wall_ms());
      auto r = f.log->append(b.data(), b.size(), LeaderEpoch(1));
      f.files.clear_hook();
      ASSERT_FALSE(r.ok());
      EXPECT_EQ(r.error().kind(), ErrorKind::kIo);
    }
    EXPECT_TRUE(f.log->offline());
    EXPECT_FALSE(f.log->out_of_space());
    f.clock.advance_ms(Log::kOutOfSpaceRetryMs * 10);
    Bytes b = test::keyed_batch({KV{"y", "refused"}}, f.clock.wall_ms());
    EXPECT_FALSE(f.log->append(b.data(), b.size(), LeaderEpoch(1)).ok());  // stays offline
    auto read = f.log->read(Offset(0), 1000, Offset(1000), true);
    ASSERT_FALSE(read.ok());
    EXPECT_NE(read.error().kind(), ErrorKind::kNotFound);  // storage error, not out of range
    f.log.reset();
    f.open(RecoveryOptions{});
    EXPECT_EQ(test::read_all(*f.log), acked) << mode;
    ASSERT_TRUE(f.append(99).ok());
  }
}

TEST(FaultInjection, FsyncErrorTakesTheLogOffline) {
  Fixture f;
  f.open();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(f.append(i).ok());
  auto acked = test::read_all(*f.log);
  f.files.set_hook([](test::FileOp op, const fs::path&) { return op == test::FileOp::kFsync ? EIO : 0; });
  Status st = f.log->flush();
  f.files.clear_hook();
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(f.log->offline());
  EXPECT_FALSE(f.append(6).ok());
  f.log.reset();
  f.open(RecoveryOptions{});
  EXPECT_EQ(test::read_all(*f.log), acked);
}

// One partition's disk errors leave the others serving; the failed one is
// recovered at the next start.
TEST(FaultInjection, OtherPartitionsKeepServingAfterOneGoesOffline) {
  test::TempDir tmp;
  test::FaultyFileSystem files(test::files());
  ManualClock clock(1'000'000);
  LogManagerConfig mc;
  mc.log_dirs = {tmp.path()};
  LogConfig cfg = small_config();
  TopicPartition a{"a", PartitionId(0)}, b{"b", PartitionId(0)};
  std::vector<ReadRecord> a_acked, b_all;
  {
    auto m = LogManager::open(files, mc, cfg, clock);
    ASSERT_TRUE(m.ok());
    Log* la = (*m)->create_log(a, cfg).value();
    Log* lb = (*m)->create_log(b, cfg).value();
    for (int i = 0; i < 10; ++i) {
      test::append_kvs(*la, {KV{"a", std::to_string(i)}}, 1000);
      test::append_kvs(*lb, {KV{"b", std::to_string(i)}}, 1000);
    }
    a_acked = test::read_all(*la);
    files.set_hook([](test::FileOp op, const fs::path& p) {
      return op == test::FileOp::kWrite && p.string().find("/a-0/") != std::string::npos ? EIO : 0;
    });
    Bytes bytes = test::keyed_batch({KV{"a", "x"}}, 1000);
    EXPECT_FALSE(la->append(bytes.data(), bytes.size(), LeaderEpoch(1)).ok());
    EXPECT_TRUE(la->offline());
    for (int i = 10; i < 40; ++i) test::append_kvs(*lb, {KV{"b", std::to_string(i)}}, 1000);
    b_all = test::read_all(*lb);
    EXPECT_EQ(b_all.size(), 40u);
    EXPECT_TRUE((*m)->tick(clock.monotonic_ms() + 3'600'000).ok() || true);  // housekeeping survives
    Status closed = (*m)->close();  // a-0 cannot finalize its indexes: no clean marker
    files.clear_hook();
    (void)closed;
  }
  auto m = LogManager::open(files, mc, cfg, clock);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(test::read_all(*(*m)->get(a)), a_acked);
  EXPECT_EQ(test::read_all(*(*m)->get(b)), b_all);
}

// kill -9 with an unflushed tail in one big active segment: recovery
// verifies the segment holding the recovery point from its first byte (as
// Kafka), truncates the torn last batch, and keeps everything else.
TEST(FaultInjection, UncleanOpenVerifiesTheWholeSegmentHoldingTheRecoveryPoint) {
  Fixture f;
  f.config.segment_bytes = 1 << 30;
  f.config.segment_index_bytes = 1 << 20;
  f.open();
  for (int i = 0; i < 2000; ++i) ASSERT_TRUE(f.append(i).ok());
  ASSERT_TRUE(f.log->flush().ok());
  Offset recovery_point = f.log->recovery_point();
  for (int i = 2000; i < 2100; ++i) ASSERT_TRUE(f.append(i).ok());
  auto all = test::read_all(*f.log);
  // A torn last batch too.
  fs::path active = Segment::log_path(f.dir(), Offset(0));
  f.log.reset();
  fs::resize_file(active, fs::file_size(active) - 7);
  all.pop_back();
  all.pop_back();
  int64_t torn_size = int64_t(fs::file_size(active));
  f.open(RecoveryOptions{.recovery_point = recovery_point});
  EXPECT_EQ(f.log->segment_count(), 1u);
  EXPECT_EQ(f.log->load_stats().bytes_scanned, torn_size);
  EXPECT_EQ(f.log->load_stats().bytes_truncated,
            int64_t(test::keyed_batch({KV{"k0", "v2099"}, KV{"k1", "w2099"}}, f.clock.wall_ms()).size()) - 7);
  EXPECT_EQ(test::read_all(*f.log), all);
  // The time index was rebuilt: a lookup by time still finds the first record.
  auto found = f.log->offset_for_timestamp(0);
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->offset, Offset(0));
}

// Issue 10 item 8: a flipped byte in a batch BELOW the recovery point of the
// active segment, then kill -9. Recovery must find it (not trust the index
// below the recovery point), end the log at that batch, and append after the
// last good batch, not after the bad one.
TEST(FaultInjection, CorruptBatchBelowTheRecoveryPointOfTheActiveSegment) {
  Fixture f;
  f.config.segment_bytes = 1 << 30;
  f.config.segment_index_bytes = 1 << 20;
  f.open();
  std::vector<int64_t> positions;  // of each batch in the one segment
  for (int i = 0; i < 300; ++i) {
    positions.push_back(f.log->size_bytes());
    ASSERT_TRUE(f.append(i).ok());
  }
  ASSERT_TRUE(f.log->flush().ok());
  Offset recovery_point = f.log->recovery_point();
  ASSERT_EQ(recovery_point, Offset(600));
  for (int i = 300; i < 310; ++i) ASSERT_TRUE(f.append(i).ok());  // unflushed tail
  auto all = test::read_all(*f.log);
  f.log.reset();  // kill -9: no close, no marker
  // Batch 200 (offsets 400-401) is far below the recovery point and beyond
  // several index entries; flip a byte of its first record's value.
  const int bad = 200;
  int64_t flip_at = positions[bad] + 70;
  ASSERT_LT(flip_at, positions[bad + 1]);
  {
    std::fstream io(Segment::log_path(f.dir(), Offset(0)), std::ios::in | std::ios::out | std::ios::binary);
    io.seekg(flip_at);
    char c = 0;
    io.read(&c, 1);
    c ^= 0x20;
    io.seekp(flip_at);
    io.write(&c, 1);
  }
  f.open(RecoveryOptions{.recovery_point = recovery_point});
  EXPECT_EQ(f.log->log_end_offset(), Offset(2 * bad));
  EXPECT_EQ(f.log->size_bytes(), positions[bad]);
  EXPECT_GT(f.log->load_stats().bytes_truncated, 0);
  all.resize(size_t(2 * bad));
  EXPECT_EQ(test::read_all(*f.log), all);
  EXPECT_EQ(f.log->recovery_point(), Offset(2 * bad));
  // New writes land right after the last good batch and read back.
  ASSERT_TRUE(f.append(1000).ok());
  EXPECT_EQ(f.log->log_end_offset(), Offset(2 * bad + 2));
  auto after = test::read_all(*f.log);
  ASSERT_EQ(after.size(), size_t(2 * bad + 2));
  EXPECT_EQ(after[2 * bad].offset, 2 * bad);
  EXPECT_EQ(after[2 * bad].value, "v1000");
  // And survive another unclean restart.
  f.log.reset();
  f.open(RecoveryOptions{.recovery_point = Offset(2 * bad)});
  EXPECT_EQ(test::read_all(*f.log), after);
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

// Missing, garbage, oversized and out-of-range checkpoint files: the logs
// still open and serve exactly their valid data.
TEST(FaultInjection, DamagedCheckpointFiles) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"missing", ""},
      {"garbage", "\x01\x02garbage\n"},
      {"oversized", std::string(2 << 20, '7')},
      {"beyond end", "0\n1\nfaulty 0 999999\n"},
      {"wrong count", "0\n5\nfaulty 0 3\n"},
  };
  for (const auto& [name, text] : cases) {
    test::TempDir tmp;
    ManualClock clock(1'000'000);
    LogManagerConfig mc;
    mc.log_dirs = {tmp.path()};
    LogConfig cfg = small_config();
    std::vector<ReadRecord> all;
    {
      auto m = LogManager::open(test::files(), mc, cfg, clock);
      ASSERT_TRUE(m.ok());
      Log* l = (*m)->create_log(kTp, cfg).value();
      for (int i = 0; i < 30; ++i) test::append_kvs(*l, {KV{"k", std::to_string(i)}}, 1000);
      all = test::read_all(*l);
      ASSERT_TRUE((*m)->close().ok());
    }
    for (const char* file : {kRecoveryPointCheckpointFile, kLogStartOffsetCheckpointFile, kCleanerOffsetCheckpointFile}) {
      // A log start beyond the end is honoured (as Kafka: the records below
      // it were deleted), so that case only damages the other two files.
      if (name == "beyond end" && std::string(file) == kLogStartOffsetCheckpointFile) continue;
      if (name == "missing") {
        fs::remove(tmp.path() / file);
      } else {
        write_text(tmp.path() / file, text);
      }
    }
    for (bool clean : {true, false}) {
      if (!clean) fs::remove(tmp.path() / kCleanShutdownFile);
      auto m = LogManager::open(test::files(), mc, cfg, clock);
      ASSERT_TRUE(m.ok()) << name;
      Log* l = (*m)->get(kTp);
      ASSERT_NE(l, nullptr);
      EXPECT_EQ(test::read_all(*l), all) << name << (clean ? " clean" : " unclean");
      EXPECT_EQ(l->log_end_offset(), Offset(30)) << name;
      if (clean) {
        ASSERT_TRUE((*m)->close().ok());
      }
    }
  }
}

}  // namespace
}  // namespace samsa

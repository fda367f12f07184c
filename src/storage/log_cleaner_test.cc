#include "storage/log_cleaner.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "storage/log.h"
#include "storage/log_manager.h"
#include "storage/test_batches.h"
#include "storage/test_records.h"

namespace samsa {
namespace {

namespace fs = std::filesystem;
using test::KV;
using test::ReadRecord;

const TopicPartition kTp{"compacted", PartitionId(0)};

LogConfig compact_config() {
  LogConfig c;
  c.segment_bytes = 1024;
  c.index_interval_bytes = 128;
  c.segment_index_bytes = 1024;
  c.cleanup_policy = CleanupPolicy{.delete_segments = false, .compact = true};
  c.min_cleanable_dirty_ratio = 0.01;
  return c;
}

struct Fixture {
  test::TempDir tmp;
  ManualClock clock{10'000'000};
  LogConfig config = compact_config();
  std::unique_ptr<Log> log;
  LogCleaner cleaner{CleanerConfig{}};

  fs::path dir() const { return tmp.path() / kTp.to_string(); }
  void open(RecoveryOptions opts = {}) {
    log.reset();
    auto l = Log::open(test::files(), dir(), kTp, config, clock, opts);
    ASSERT_TRUE(l.ok()) << l.error().to_string();
    log = std::move(l).value();
  }
  LogCleaner::LogLookup lookup() {
    return [this](const TopicPartition& tp) { return tp == kTp ? log.get() : nullptr; };
  }
  void clean_all() {
    Status st = cleaner.clean_all({log.get()}, lookup(), clock.wall_ms());
    ASSERT_TRUE(st.ok()) << st.error().to_string();
  }
  // Rounds of updates of keys k0..k{keys-1}: value "r<round>-k<i>".
  // Returns the expected latest value per key and its offset.
  std::map<std::string, ReadRecord> write_rounds(int rounds, int keys, int per_batch = 3) {
    std::map<std::string, ReadRecord> latest;
    for (int r = 0; r < rounds; ++r) {
      for (int i = 0; i < keys; i += per_batch) {
        std::vector<KV> kvs;
        for (int j = i; j < std::min(keys, i + per_batch); ++j) {
          kvs.push_back(KV{"k" + std::to_string(j), "r" + std::to_string(r) + "-k" + std::to_string(j)});
        }
        Offset first = test::append_kvs(*log, kvs, clock.wall_ms());
        for (size_t j = 0; j < kvs.size(); ++j) {
          latest[kvs[j].key] = ReadRecord{first.value() + int64_t(j), kvs[j].key, kvs[j].value};
        }
      }
    }
    return latest;
  }
};

// The records in segments below the active one, by key: the latest value
// of each key must be exactly what was last written before the active
// segment, and nothing older may remain.
TEST(LogCleaner, KeepsLatestValuePerKeyWithStableOffsets) {
  Fixture f;
  f.open();
  auto latest = f.write_rounds(12, 10);
  ASSERT_GT(f.log->segment_count(), 3u);
  std::vector<ReadRecord> before = test::read_all(*f.log);
  int64_t active_size = f.log->segments().rbegin()->second->size();
  Offset active_base = f.log->active_segment_base();
  int64_t size_before = f.log->size_bytes();

  f.clean_all();
  EXPECT_GE(f.cleaner.stats().passes_completed, 1);
  EXPECT_GT(f.cleaner.stats().records_removed, 0);
  EXPECT_LT(f.log->size_bytes(), size_before);
  EXPECT_EQ(f.log->active_segment_base(), active_base);
  EXPECT_EQ(f.log->segments().rbegin()->second->size(), active_size);  // active untouched

  std::vector<ReadRecord> after = test::read_all(*f.log);
  // Every record kept is one of the originals, at its original offset.
  std::map<int64_t, ReadRecord> by_offset;
  for (const auto& r : before) by_offset[r.offset] = r;
  std::map<std::string, int> seen_below_active;
  for (const auto& r : after) {
    ASSERT_TRUE(by_offset.count(r.offset));
    EXPECT_EQ(by_offset[r.offset], r);
    if (Offset(r.offset) < active_base) ++seen_below_active[*r.key];
  }
  // Below the active segment, a key appears at most once, and then it is
  // the newest of that key below the active segment.
  for (const auto& [key, n] : seen_below_active) EXPECT_EQ(n, 1) << key;
  // The last value of every key is still readable.
  std::map<std::string, ReadRecord> last_seen;
  for (const auto& r : after) last_seen[*r.key] = r;
  for (const auto& [key, r] : latest) EXPECT_EQ(last_seen[key], r) << key;
  EXPECT_EQ(f.log->log_end_offset(), Offset(before.back().offset + 1));

  // Reopen (clean and unclean): the cleaned segments load and read the same.
  ASSERT_TRUE(f.log->close().ok());
  f.open(RecoveryOptions{.had_clean_shutdown = true});
  EXPECT_EQ(test::read_all(*f.log), after);
  f.open(RecoveryOptions{});
  EXPECT_EQ(test::read_all(*f.log), after);
}

TEST(LogCleaner, SecondPassIsIdempotentAndCheckpointAdvances) {
  Fixture f;
  f.open();
  f.write_rounds(6, 10);
  f.clean_all();
  Offset cp = f.cleaner.checkpoints().at(kTp);
  EXPECT_EQ(cp, f.log->active_segment_base());
  auto after = test::read_all(*f.log);
  auto replaced = f.cleaner.stats().segments_replaced;
  f.clean_all();  // nothing dirty: no pass
  EXPECT_EQ(f.cleaner.stats().segments_replaced, replaced);
  EXPECT_EQ(test::read_all(*f.log), after);
}

TEST(LogCleaner, TombstonesRemovedOnlyAfterDeleteRetention) {
  Fixture f;
  f.config.delete_retention_ms = 60'000;
  f.open();
  f.write_rounds(2, 6);
  test::append_kvs(*f.log, {KV{"k1", std::nullopt}, KV{"k2", std::nullopt}}, f.clock.wall_ms());
  f.write_rounds(3, 1);  // k0 only: pushes the tombstones out of the active segment
  ASSERT_TRUE(f.log->roll().ok());
  f.clean_all();
  auto has = [](const std::vector<ReadRecord>& rs, const std::string& k) {
    std::vector<ReadRecord> out;
    for (const auto& r : rs) {
      if (r.key == k) out.push_back(r);
    }
    return out;
  };
  auto recs = test::read_all(*f.log);
  ASSERT_EQ(has(recs, "k1").size(), 1u);  // the tombstone only
  EXPECT_FALSE(has(recs, "k1")[0].value.has_value());
  ASSERT_EQ(has(recs, "k3").size(), 1u);

  f.clock.advance_ms(60'001);
  test::append_kvs(*f.log, {KV{"k3", "fresh"}}, f.clock.wall_ms());
  ASSERT_TRUE(f.log->roll().ok());
  f.clean_all();
  recs = test::read_all(*f.log);
  EXPECT_TRUE(has(recs, "k1").empty());  // tombstone gone, and the values it deleted
  EXPECT_TRUE(has(recs, "k2").empty());
  ASSERT_EQ(has(recs, "k3").size(), 1u);
  EXPECT_EQ(has(recs, "k3")[0].value, "fresh");
}

TEST(LogCleaner, HonoursDirtyRatioAndMaxCompactionLag) {
  Fixture f;
  f.config.min_cleanable_dirty_ratio = 0.9;
  f.open();
  f.write_rounds(2, 10);
  ASSERT_TRUE(f.log->roll().ok());
  f.clean_all();  // everything dirty: ratio 1
  ASSERT_EQ(f.cleaner.stats().passes_completed, 1);
  f.write_rounds(1, 3);  // a little dirt after a larger clean part
  ASSERT_TRUE(f.log->roll().ok());
  auto c = f.cleaner.cleanability(*f.log, f.clock.wall_ms());
  EXPECT_GT(c.dirty_bytes, 0);
  EXPECT_LT(c.ratio(), 0.9);
  f.clean_all();
  EXPECT_EQ(f.cleaner.stats().passes_completed, 1);  // below the ratio: not cleaned

  f.config.max_compaction_lag_ms = 5000;
  f.log->set_config(f.config);
  f.clean_all();
  EXPECT_EQ(f.cleaner.stats().passes_completed, 1);  // dirty data is not old enough yet
  f.clock.advance_ms(5001);
  EXPECT_TRUE(f.cleaner.cleanability(*f.log, f.clock.wall_ms()).lag_exceeded);
  f.clean_all();
  EXPECT_EQ(f.cleaner.stats().passes_completed, 2);
}

TEST(LogCleaner, MaxCompactionLagRollsTheActiveSegment) {
  Fixture f;
  f.config.segment_bytes = 1 << 20;
  f.config.max_compaction_lag_ms = 1000;
  f.open();
  test::append_kvs(*f.log, {KV{"a", "1"}}, f.clock.wall_ms());
  f.clock.advance_ms(1001);
  test::append_kvs(*f.log, {KV{"a", "2"}}, f.clock.wall_ms());
  EXPECT_EQ(f.log->segment_count(), 2u);
}

TEST(LogCleaner, MinCompactionLagKeepsYoungSegmentsDirty) {
  Fixture f;
  f.config.min_compaction_lag_ms = 10'000;
  f.open();
  f.write_rounds(4, 10);
  ASSERT_TRUE(f.log->roll().ok());
  auto c = f.cleaner.cleanability(*f.log, f.clock.wall_ms());
  EXPECT_EQ(c.dirty_bytes, 0);
  f.clean_all();
  EXPECT_EQ(f.cleaner.stats().passes_completed, 0);
  f.clock.advance_ms(10'001);
  f.clean_all();
  EXPECT_EQ(f.cleaner.stats().passes_completed, 1);
}

TEST(LogCleaner, CompressedBatchesKeepTheirCodec) {
  Fixture f;
  f.open();
  for (int r = 0; r < 8; ++r) {
    std::vector<KV> kvs;
    for (int i = 0; i < 8; ++i) kvs.push_back(KV{"k" + std::to_string(i), "v" + std::to_string(r) + std::string(40, 'z')});
    test::append_kvs(*f.log, kvs, f.clock.wall_ms() + r, Compression::kGzip);
  }
  ASSERT_TRUE(f.log->roll().ok());
  f.clean_all();
  auto recs = test::read_all(*f.log);
  ASSERT_EQ(recs.size(), 8u);
  for (const auto& r : recs) EXPECT_EQ(r.value->substr(0, 2), "v7");
  auto first = f.log->read(f.log->log_start_offset(), 1 << 20, f.log->log_end_offset(), true);
  ASSERT_TRUE(first.ok());
  uint8_t h[61];
  ASSERT_EQ(::pread(first->records.file->native_handle(), h, sizeof h, first->records.position), 61);
  EXPECT_EQ(RecordBatchHeader(h).compression(), Compression::kGzip);
}

// Work is bounded per step; appends and reads interleave with a pass.
TEST(LogCleaner, StepsAreBoundedAndInterleaveWithAppends) {
  Fixture f;
  f.cleaner.set_config(CleanerConfig{.budget_bytes_per_step = 300});
  f.open();
  auto latest = f.write_rounds(6, 10);
  int steps = 0;
  while (true) {
    int64_t read_before = f.cleaner.stats().bytes_read;
    bool worked = f.cleaner.step({f.log.get()}, f.lookup(), f.clock.wall_ms(), 0);
    if (!worked) break;
    ++steps;
    // One budget, plus at most one batch past it.
    EXPECT_LE(f.cleaner.stats().bytes_read - read_before, 300 + 200);
    test::append_kvs(*f.log, {KV{"k0", "during-" + std::to_string(steps)}}, f.clock.wall_ms());
    latest["k0"] = ReadRecord{f.log->log_end_offset().value() - 1, "k0", "during-" + std::to_string(steps)};
    ASSERT_FALSE(test::read_all(*f.log).empty());
    ASSERT_LT(steps, 1000);
    if (!f.cleaner.busy() && f.cleaner.stats().passes_completed > 0) break;
  }
  EXPECT_GT(steps, 3);
  EXPECT_EQ(f.cleaner.stats().passes_abandoned, 0);
  EXPECT_EQ(f.cleaner.stats().passes_completed, 1);
  std::map<std::string, ReadRecord> last_seen;
  for (const auto& r : test::read_all(*f.log)) last_seen[*r.key] = r;
  for (const auto& [key, r] : latest) EXPECT_EQ(last_seen[key], r) << key;
}

TEST(LogCleaner, PassAbandonedWhenRetentionRemovesSegments) {
  Fixture f;
  f.config.cleanup_policy = CleanupPolicy{.delete_segments = true, .compact = true};
  f.cleaner.set_config(CleanerConfig{.budget_bytes_per_step = 300});
  f.open();
  f.write_rounds(6, 10);
  ASSERT_TRUE(f.cleaner.step({f.log.get()}, f.lookup(), f.clock.wall_ms(), 0));
  ASSERT_TRUE(f.cleaner.busy());
  ASSERT_TRUE(f.log->advance_log_start_offset(f.log->segments().begin()->second->next_offset()).ok());
  ASSERT_EQ(f.log->delete_old_segments(f.clock.wall_ms()).value(), 1);
  f.cleaner.step({f.log.get()}, f.lookup(), f.clock.wall_ms(), 0);
  EXPECT_FALSE(f.cleaner.busy());
  EXPECT_EQ(f.cleaner.stats().passes_abandoned, 1);
  for (const auto& e : fs::directory_iterator(f.dir())) {
    EXPECT_FALSE(e.path().string().ends_with(".cleaned")) << e.path();
  }
  f.clean_all();  // starts over and completes
  EXPECT_EQ(f.cleaner.stats().passes_completed, 1);
}

TEST(LogCleaner, CorruptBatchAbandonsThePassAndCopiesNothing) {
  Fixture f;
  f.open();
  f.write_rounds(6, 10);
  fs::path first = Segment::log_path(f.dir(), Offset(0));
  {
    std::fstream io(first, std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(100);
    io.put('\x7f');
  }
  Status st = f.cleaner.clean_all({f.log.get()}, f.lookup(), f.clock.wall_ms());
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(f.cleaner.stats().segments_replaced, 0);
  EXPECT_NE(f.cleaner.last_error().find("CRC"), std::string::npos) << f.cleaner.last_error();
}

// Crash during the swap: the cleaned copy was committed as `.log.swap` but
// the original `.log` and its indexes are still there. Opening the log
// completes the swap; a `.cleaned` file (crash before the commit) is
// dropped and the original served.
TEST(LogCleaner, OpenCompletesAnInterruptedSwapAndDropsUncommittedCopies) {
  Fixture f;
  f.open();
  f.write_rounds(6, 10);
  ASSERT_TRUE(f.log->close().ok());
  fs::path saved = f.tmp.path() / "saved";
  fs::copy(f.dir(), saved);
  f.open(RecoveryOptions{.had_clean_shutdown = true});
  auto original = test::read_all(*f.log);
  f.clean_all();
  auto cleaned = test::read_all(*f.log);
  ASSERT_NE(cleaned, original);
  ASSERT_TRUE(f.log->close().ok());
  f.log.reset();

  // Case 1: every cleaned .log becomes a .swap next to the original files.
  fs::path cleaned_dir = f.tmp.path() / "cleaned";
  fs::copy(f.dir(), cleaned_dir);
  fs::remove_all(f.dir());
  fs::copy(saved, f.dir());
  int swaps = 0;
  for (const auto& e : fs::directory_iterator(cleaned_dir)) {
    std::string name = e.path().filename().string();
    if (!name.ends_with(".log")) continue;
    fs::path orig = f.dir() / name;
    if (fs::exists(orig) && fs::file_size(orig) == fs::file_size(e.path())) continue;
    fs::copy_file(e.path(), f.dir() / (name + ".swap"));
    ++swaps;
  }
  ASSERT_GT(swaps, 0);
  f.open(RecoveryOptions{.had_clean_shutdown = true});
  auto got = test::read_all(*f.log);
  // Records of segments the cleaner removed entirely may remain (the test
  // only re-created swaps), but no superseded value of a swapped segment.
  std::map<std::string, std::string> last;
  for (const auto& r : got) last[*r.key] = *r.value;
  std::map<std::string, std::string> want;
  for (const auto& r : cleaned) want[*r.key] = *r.value;
  EXPECT_EQ(last, want);
  for (const auto& e : fs::directory_iterator(f.dir())) EXPECT_FALSE(e.path().string().ends_with(".swap"));
  ASSERT_TRUE(f.log->close().ok());
  f.log.reset();

  // Case 2: uncommitted copies (.cleaned) are deleted, originals served.
  fs::remove_all(f.dir());
  fs::copy(saved, f.dir());
  for (const auto& e : fs::directory_iterator(cleaned_dir)) {
    std::string name = e.path().filename().string();
    if (name.ends_with(".log")) fs::copy_file(e.path(), f.dir() / (name + ".cleaned"));
  }
  f.open(RecoveryOptions{});
  EXPECT_EQ(test::read_all(*f.log), original);
  for (const auto& e : fs::directory_iterator(f.dir())) EXPECT_FALSE(e.path().string().ends_with(".cleaned"));
}

TEST(LogCleaner, LogManagerRunsTheCleanerAndPersistsItsCheckpoint) {
  test::TempDir tmp;
  ManualClock clock(10'000'000);
  LogManagerConfig mc;
  mc.log_dirs = {tmp.path()};
  mc.cleaner.backoff_ms = 1000;
  LogConfig cfg = compact_config();
  {
    auto m = LogManager::open(test::files(), mc, cfg, clock);
    ASSERT_TRUE(m.ok());
    auto log = (*m)->create_log(kTp, cfg);
    ASSERT_TRUE(log.ok());
    for (int r = 0; r < 6; ++r) {
      for (int i = 0; i < 10; ++i) test::append_kvs(**log, {KV{"k" + std::to_string(i), "r" + std::to_string(r)}}, clock.wall_ms());
    }
    for (int t = 0; t < 50 && (*m)->cleaner().stats().passes_completed == 0; ++t) {
      clock.advance_ms(1000);
      ASSERT_TRUE((*m)->tick(clock.monotonic_ms()).ok());
    }
    EXPECT_EQ((*m)->cleaner().stats().passes_completed, 1);
    ASSERT_TRUE((*m)->close().ok());
  }
  auto cp = read_offset_checkpoint(test::files(), tmp.path() / kCleanerOffsetCheckpointFile);
  ASSERT_TRUE(cp.ok());
  ASSERT_EQ(cp->count(kTp), 1u);
  EXPECT_GT(cp->at(kTp), Offset(0));
  auto m = LogManager::open(test::files(), mc, cfg, clock);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ((*m)->cleaner().checkpoints().at(kTp), cp->at(kTp));
}

}  // namespace
}  // namespace samsa

// The Log's producer-state snapshots: written at rolls and at close, the
// state at open read from the latest one with only the segments after it
// replayed (counted in LogLoadStats), corrupt ones skipped, the ones above
// a recovered or truncated end removed, and removed with their segments.
#include <gtest/gtest.h>

#include <fstream>

#include "storage/log.h"
#include "storage/producer_snapshot.h"
#include "storage/test_batches.h"

namespace samsa {
namespace {

namespace fs = std::filesystem;

const TopicPartition kTp{"snap", PartitionId(0)};
constexpr int kRecords = 5;  // per batch: batch i holds offsets and sequences [5i, 5i+4]

Bytes producer_batch(int64_t pid, int batch) {
  test::BatchSpec s;
  s.records = kRecords;
  s.producer_id = pid;
  s.producer_epoch = 0;
  s.base_sequence = batch * kRecords;
  return test::make_batch(s);
}

struct Fixture {
  test::TempDir tmp;
  ManualClock clock{1'000'000};
  LogConfig config;
  Fixture() {
    config.segment_bytes = 1024;  // about 7 batches a segment
    config.file_delete_delay_ms = 0;
  }
  fs::path dir() const { return tmp.path() / kTp.to_string(); }
  std::unique_ptr<Log> open(RecoveryOptions opts = {}, const fs::path& at = {}) {
    auto log = Log::open(test::files(), at.empty() ? dir() : at, kTp, config, clock, opts);
    EXPECT_TRUE(log.ok()) << (log.ok() ? "" : log.error().to_string());
    return log.ok() ? std::move(log).value() : nullptr;
  }
  static RecoveryOptions clean(const Log& log) {
    return {.had_clean_shutdown = true, .recovery_point = log.log_end_offset()};
  }
  static AppendResult append(Log& log, int64_t pid, int batch) {
    Bytes b = producer_batch(pid, batch);
    auto r = log.append(b.data(), b.size(), LeaderEpoch(1));
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : AppendResult{};
  }
  static void produce(Log& log, int64_t pid, int batches) {
    for (int i = 0; i < batches; ++i) append(log, pid, i);
  }
  // A log of `batches` batches of producer 7, closed cleanly: how to reopen it.
  RecoveryOptions write_and_close(int batches) {
    auto log = open();
    produce(*log, 7, batches);
    RecoveryOptions opts = clean(*log);
    EXPECT_TRUE(log->close().ok());
    return opts;
  }
  std::set<Offset> snapshot_files(const fs::path& d = {}) const {
    std::set<Offset> out;
    for (const auto& e : fs::directory_iterator(d.empty() ? dir() : d)) {
      std::string name = e.path().filename().string();
      if (name.ends_with(".snapshot")) {
        EXPECT_EQ(name.size(), 20 + 9) << name;  // Kafka's names: 20 digits
        out.insert(Offset(std::stoll(name.substr(0, 20))));
      }
    }
    return out;
  }
  // The state a replay of the whole log gives: a copy of the dir without
  // its snapshots, opened.
  ProducerMap replayed_from_scratch() {
    fs::path copy = tmp.path() / "copy";
    fs::remove_all(copy);
    fs::copy(dir(), copy);
    for (Offset at : snapshot_files(copy)) fs::remove(producer_snapshot_path(copy, at));
    auto log = open({}, copy);
    EXPECT_EQ(log->load_stats().producer_snapshot_offset, -1);
    return log->producer_state().producers();
  }
};

void expect_same(const ProducerMap& got, const ProducerMap& want) {
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [id, entry] : want) {
    ASSERT_TRUE(got.count(id)) << id.value();
    EXPECT_EQ(got.at(id).epoch, entry.epoch);
    EXPECT_EQ(got.at(id).batches, entry.batches) << id.value();
  }
}

int64_t active_size(const Log& log) { return log.segments().rbegin()->second->size(); }

TEST(LogSnapshots, WrittenAtEachRollAndAtCloseTheNewestKept) {
  Fixture f;
  ASSERT_TRUE(f.open()->close().ok());
  EXPECT_TRUE(f.snapshot_files().empty());  // an empty log needs none
  auto log = f.open();
  Fixture::produce(*log, 7, 40);
  ASSERT_GT(log->segment_count(), 4u);
  EXPECT_EQ(log->producer_snapshots().size(), Log::kKeptProducerSnapshots);
  EXPECT_EQ(f.snapshot_files(), log->producer_snapshots());
  for (Offset at : log->producer_snapshots()) EXPECT_TRUE(log->segments().count(at)) << at.value();
  EXPECT_EQ(*log->producer_snapshots().rbegin(), log->active_segment_base());
  Offset end = log->log_end_offset();
  ASSERT_TRUE(log->close().ok());
  std::set<Offset> files = f.snapshot_files();
  EXPECT_EQ(files.size(), Log::kKeptProducerSnapshots);
  EXPECT_EQ(*files.rbegin(), end);
  // Reopened and closed idle: the one at the end stays as it is.
  const auto written = fs::last_write_time(producer_snapshot_path(f.dir(), end));
  ASSERT_TRUE(f.open(Fixture::clean(*log))->close().ok());
  EXPECT_EQ(f.snapshot_files(), files);
  EXPECT_EQ(fs::last_write_time(producer_snapshot_path(f.dir(), end)), written);
}

TEST(LogSnapshots, CleanOpenReadsNoSegmentAndDeduplicatesTheLastFiveBatches) {
  Fixture f;
  RecoveryOptions opts;
  {
    auto log = f.open();
    Fixture::produce(*log, 7, 40);
    Fixture::produce(*log, 8, 3);
    opts = Fixture::clean(*log);
    ASSERT_TRUE(log->close().ok());
  }
  auto log = f.open(opts);
  EXPECT_EQ(log->load_stats().producer_snapshot_offset, log->log_end_offset().value());
  EXPECT_EQ(log->load_stats().producer_state_bytes_read, 0);
  EXPECT_EQ(log->load_stats().producer_state_batches_read, 0);
  expect_same(log->producer_state().producers(), f.replayed_from_scratch());
  for (int batch = 35; batch < 40; ++batch) {  // every retained batch, not only the last (Kafka's)
    AppendResult retry = Fixture::append(*log, 7, batch);
    EXPECT_TRUE(retry.duplicate) << batch;
    EXPECT_EQ(retry.first_offset, Offset(batch * kRecords));
  }
  EXPECT_TRUE(Fixture::append(*log, 8, 2).duplicate);
}

TEST(LogSnapshots, OpenAfterACrashReplaysOnlyTheLastSegment) {
  Fixture f;
  RecoveryOptions opts;
  int64_t total = 0;
  {
    auto log = f.open();
    Fixture::produce(*log, 7, 100);
    ASSERT_GE(log->segment_count(), 10u);
    total = log->size_bytes();
    opts.recovery_point = log->recovery_point();
    // Destroyed without close: a crash.
  }
  auto log = f.open(opts);
  const Offset active_base = log->active_segment_base();
  EXPECT_EQ(log->load_stats().producer_snapshot_offset, active_base.value());
  EXPECT_LE(log->load_stats().producer_state_bytes_read, active_size(*log));
  EXPECT_LT(log->load_stats().producer_state_bytes_read * 5, total);
  EXPECT_EQ(log->load_stats().producer_state_batches_read, (log->log_end_offset() - active_base) / kRecords);
  expect_same(log->producer_state().producers(), f.replayed_from_scratch());
  EXPECT_TRUE(Fixture::append(*log, 7, 99).duplicate);
  // The replay was saved: the next open reads nothing.
  EXPECT_EQ(*f.snapshot_files().rbegin(), log->log_end_offset());
}

TEST(LogSnapshots, CorruptOrShortSnapshotsAreSkippedForAnOlderOne) {
  Fixture f;
  const RecoveryOptions opts = f.write_and_close(40);
  std::set<Offset> files = f.snapshot_files();
  ASSERT_EQ(files.size(), 3u);
  auto it = files.rbegin();
  const Offset newest = *it++, second = *it++, third = *it;
  {
    std::fstream flip(producer_snapshot_path(f.dir(), newest), std::ios::in | std::ios::out | std::ios::binary);
    flip.seekp(12);
    flip.put('\x7f');  // inside the first entry: the CRC no longer matches
  }
  fs::resize_file(producer_snapshot_path(f.dir(), second), 3);  // shorter than the header
  auto log = f.open(opts);
  EXPECT_EQ(log->load_stats().producer_snapshot_offset, third.value());
  EXPECT_GT(log->load_stats().producer_state_bytes_read, 0);
  EXPECT_FALSE(f.snapshot_files().count(second));
  expect_same(log->producer_state().producers(), f.replayed_from_scratch());
  EXPECT_TRUE(Fixture::append(*log, 7, 39).duplicate);
}

TEST(LogSnapshots, WithoutSnapshotsTheWholeLogIsReplayedOnce) {
  Fixture f;
  const RecoveryOptions opts = f.write_and_close(40);
  for (Offset at : f.snapshot_files()) fs::remove(producer_snapshot_path(f.dir(), at));  // a log from before
  {
    auto log = f.open(opts);
    EXPECT_EQ(log->load_stats().producer_snapshot_offset, -1);
    EXPECT_EQ(log->load_stats().producer_state_bytes_read, log->size_bytes());
    EXPECT_EQ(log->load_stats().producer_state_batches_read, 40);
    ASSERT_TRUE(log->close().ok());
  }
  auto log = f.open(opts);
  EXPECT_EQ(log->load_stats().producer_state_bytes_read, 0);
  EXPECT_TRUE(Fixture::append(*log, 7, 39).duplicate);
}

TEST(LogSnapshots, SnapshotAboveTheRecoveredEndIsRemoved) {
  Fixture f;
  Offset end, active_base;
  {
    auto log = f.open();
    Fixture::produce(*log, 7, 40);
    end = log->log_end_offset();
    active_base = log->active_segment_base();
    ASSERT_TRUE(log->close().ok());
  }
  ASSERT_TRUE(f.snapshot_files().count(end));
  // The crash lost the tail that the snapshot at the end describes (its
  // pages written back, the data's not): the last batch is torn.
  fs::path active = Segment::log_path(f.dir(), active_base);
  fs::resize_file(active, fs::file_size(active) - 1);
  auto log = f.open({.recovery_point = Offset(0)});
  ASSERT_EQ(log->log_end_offset(), end - kRecords);
  for (Offset at : f.snapshot_files()) EXPECT_LE(at, log->log_end_offset());
  EXPECT_LT(log->load_stats().producer_snapshot_offset, log->log_end_offset().value());
  expect_same(log->producer_state().producers(), f.replayed_from_scratch());
  AppendResult again = Fixture::append(*log, 7, 39);  // the lost batch is appended anew
  EXPECT_FALSE(again.duplicate);
  EXPECT_FALSE(again.producer_fault);
}

TEST(LogSnapshots, TruncationRemovesSnapshotsAboveAndReloadsFromBelow) {
  Fixture f;
  auto log = f.open();
  Fixture::produce(*log, 7, 40);
  const Offset cut(12 * kRecords);  // batches 12.. go; 7..11 are the producer's last five again
  ASSERT_LT(*log->producer_snapshots().begin(), Offset(200));
  ASSERT_TRUE(log->truncate_to(cut).ok());
  ASSERT_EQ(log->log_end_offset(), cut);
  for (Offset at : f.snapshot_files()) EXPECT_LE(at, cut);
  EXPECT_EQ(f.snapshot_files(), log->producer_snapshots());
  EXPECT_EQ(log->producer_state().find(ProducerId(7))->last_seq(), 12 * kRecords - 1);
  AppendResult retry = Fixture::append(*log, 7, 8);  // below the cut: still known
  EXPECT_TRUE(retry.duplicate);
  EXPECT_EQ(retry.first_offset, Offset(8 * kRecords));
  EXPECT_EQ(Fixture::append(*log, 7, 13).producer_fault, ProducerFault::kOutOfOrderSequence);
  EXPECT_FALSE(Fixture::append(*log, 7, 12).producer_fault);
}

TEST(LogSnapshots, RetentionRemovesThemWithTheirSegments) {
  Fixture f;
  auto log = f.open();
  Fixture::produce(*log, 7, 40);
  const Offset start = std::prev(log->segments().end(), 2)->first;
  ASSERT_TRUE(log->advance_log_start_offset(start).ok());
  auto deleted = log->delete_old_segments(f.clock.wall_ms());
  ASSERT_TRUE(deleted.ok());
  ASSERT_GT(*deleted, 0);
  EXPECT_EQ(log->log_start_offset(), start);
  EXPECT_EQ(f.snapshot_files(), log->producer_snapshots());
  ASSERT_FALSE(log->producer_snapshots().empty());
  EXPECT_GE(*log->producer_snapshots().begin(), start);
  ASSERT_TRUE(log->truncate_fully_and_start_at(Offset(1000)).ok());
  EXPECT_TRUE(f.snapshot_files().empty());
  EXPECT_TRUE(log->producer_snapshots().empty());
}

}  // namespace
}  // namespace samsa

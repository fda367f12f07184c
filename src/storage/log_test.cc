#include "storage/log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "model/record_batch.h"
#include "storage/test_batches.h"

namespace samsa {
namespace {

using test::BatchSpec;
using test::make_batch;

const TopicPartition kTp{"orders", PartitionId(3)};

LogConfig small_config() {
  LogConfig c;
  c.segment_bytes = 2048;
  c.index_interval_bytes = 128;
  c.segment_index_bytes = 1024;
  return c;
}

struct Fixture {
  test::TempDir tmp;
  ManualClock clock{1'000'000};
  LogConfig config = small_config();
  std::filesystem::path dir() const { return tmp.path() / kTp.to_string(); }

  std::unique_ptr<Log> open(RecoveryOptions opts = {}) {
    auto log = Log::open(test::files(), dir(), kTp, config, clock, opts);
    EXPECT_TRUE(log.ok()) << (log.ok() ? "" : log.error().to_string());
    return log.ok() ? std::move(log).value() : nullptr;
  }
};

// Batch i has (i % 4) + 1 records and values of varying size.
Bytes batch_for(int i, int64_t ts) {
  return make_batch(BatchSpec{Offset(0), (i % 4) + 1, ts, 1, 10 + (i * 7) % 60, uint8_t('a' + i % 26)});
}

// Appends n batches; returns the base offset of each.
std::vector<Offset> append_n(Log& log, int n, int64_t ts0 = 5000) {
  std::vector<Offset> bases;
  for (int i = 0; i < n; ++i) {
    Bytes b = batch_for(i, ts0 + i * 10);
    auto r = log.append(b.data(), b.size(), LeaderEpoch(7));
    EXPECT_TRUE(r.ok()) << r.error().to_string();
    bases.push_back(r->first_offset);
    EXPECT_EQ(RecordBatchHeader(b.data()).base_offset(), r->first_offset);  // patched in place
    EXPECT_EQ(RecordBatchHeader(b.data()).partition_leader_epoch(), LeaderEpoch(7));
  }
  return bases;
}

Bytes region_bytes(const FileRegion& r) {
  Bytes out(size_t(r.size));
  if (r.size > 0) {
    EXPECT_EQ(::pread(r.file->native_handle(), out.data(), out.size(), r.position), ssize_t(out.size()));
  }
  return out;
}

// Reads the whole log from `from` with repeated reads; checks every batch.
std::vector<Offset> read_all(Log& log, Offset from, int32_t max_bytes = 700) {
  std::vector<Offset> bases;
  while (from < log.log_end_offset()) {
    auto r = log.read(from, max_bytes, Offset(INT64_MAX), true);
    EXPECT_TRUE(r.ok());
    if (!r.ok() || r->records.size == 0) break;
    Bytes bytes = region_bytes(r->records);
    BatchIterator it(bytes);
    while (auto b = it.next()) {
      EXPECT_EQ(validate_batch(b->bytes), BatchFault::kNone);
      if (b->header.last_offset() >= from) bases.push_back(b->header.base_offset());
      from = b->header.last_offset() + 1;
    }
    EXPECT_TRUE(it.at_end());
  }
  return bases;
}

TEST(LogTest, AppendReadRoundTripAcrossManyRolls) {
  Fixture f;
  auto log = f.open();
  auto bases = append_n(*log, 300);
  EXPECT_GT(log->segment_count(), 10u);
  EXPECT_EQ(log->log_start_offset(), Offset(0));
  EXPECT_EQ(bases[1], Offset(1));
  EXPECT_EQ(bases[2], Offset(3));
  EXPECT_EQ(read_all(*log, Offset(0)), bases);
  // Reading from any offset starts with the batch holding it.
  for (int64_t o = 0; o < log->log_end_offset().value(); ++o) {
    auto r = log->read(Offset(o), 1, Offset(INT64_MAX), true);
    ASSERT_TRUE(r.ok());
    Bytes bytes = region_bytes(r->records);
    ASSERT_GE(bytes.size(), batch_layout::kHeaderSize);
    RecordBatchHeader h(bytes.data());
    EXPECT_LE(h.base_offset(), Offset(o));
    EXPECT_GE(h.last_offset(), Offset(o));
    EXPECT_EQ(int64_t(bytes.size()), h.total_size());  // min_one_message: exactly one batch
  }
}

TEST(LogTest, ReadLimitsAndRanges) {
  Fixture f;
  auto log = f.open();
  append_n(*log, 100);
  Offset leo = log->log_end_offset();
  auto r = log->read(leo, 1000, Offset(INT64_MAX), false);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->records.size, 0);
  EXPECT_EQ(r->log_end_offset, leo);
  auto bad = log->read(leo + 1, 1000, Offset(INT64_MAX), false);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind(), ErrorKind::kNotFound);
  // max_bytes below the first batch: nothing unless min_one_message.
  r = log->read(Offset(0), 10, Offset(INT64_MAX), false);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->records.size, 0);
  // Upper bound: no batch whose last offset reaches it.
  r = log->read(Offset(0), 1 << 20, Offset(10), false);
  ASSERT_TRUE(r.ok());
  Bytes bytes = region_bytes(r->records);
  BatchIterator it(bytes);
  Offset last{-1};
  while (auto b = it.next()) last = b->header.last_offset();
  EXPECT_LT(last, Offset(10));
  EXPECT_GE(last, Offset(10 - 4));
  // One segment per read, never more than max_bytes.
  r = log->read(Offset(0), 1 << 20, Offset(INT64_MAX), false);
  ASSERT_TRUE(r.ok());
  EXPECT_LE(r->records.size, f.config.segment_bytes);
  EXPECT_GT(r->records.size, 0);
}

TEST(LogTest, OutOfRangeBelowLogStart) {
  Fixture f;
  auto log = f.open();
  append_n(*log, 200);
  ASSERT_TRUE(log->advance_log_start_offset(Offset(150)).ok());
  auto deleted = log->delete_old_segments(0);
  ASSERT_TRUE(deleted.ok());
  EXPECT_GT(*deleted, 0);
  EXPECT_EQ(log->log_start_offset(), Offset(150));
  EXPECT_LE(log->active_segment_base(), log->log_end_offset());
  auto r = log->read(Offset(149), 100, Offset(INT64_MAX), true);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kNotFound);
  EXPECT_TRUE(log->read(Offset(150), 100, Offset(INT64_MAX), true).ok());
}

TEST(LogTest, OffsetForTimestamp) {
  Fixture f;
  auto log = f.open();
  auto bases = append_n(*log, 200, 5000);  // batch i: timestamps 5000+10i+k
  for (int i : {0, 1, 57, 123, 199}) {
    auto t = log->offset_for_timestamp(5000 + i * 10);
    ASSERT_TRUE(t.ok() && t->has_value());
    EXPECT_EQ((*t)->offset, bases[size_t(i)]);
    EXPECT_EQ((*t)->timestamp, 5000 + i * 10);
  }
  auto t = log->offset_for_timestamp(5000 + 3 * 10 + 2);  // third record of batch 3
  ASSERT_TRUE(t.ok() && t->has_value());
  EXPECT_EQ((*t)->offset, bases[3] + 2);
  t = log->offset_for_timestamp(5000 + 199 * 10 + 100);
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(t->has_value());
}

// ListOffsets -3 (KIP-734): the first record holding the largest timestamp,
// wherever it is: a segment that is neither first nor last, and a record
// that is its batch's first, not the last (the time index's offset).
TEST(LogTest, OffsetOfMaxTimestampFindsTheRecordAcrossSegments) {
  Fixture f;
  auto log = f.open();
  auto none = log->offset_of_max_timestamp();
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  append_n(*log, 120);  // timestamps 5000..6199, several segments
  test::BatchSpec spec;
  spec.base_offset = log->log_end_offset();
  spec.records = 4;
  spec.first_timestamp = 90000;  // records 90000, 89990, ... : the first is the max
  spec.timestamp_step = -10;
  Bytes peak = test::make_batch(spec);
  auto appended = log->append(peak.data(), peak.size(), LeaderEpoch(7));
  ASSERT_TRUE(appended.ok());
  ASSERT_TRUE(log->roll().ok());
  append_n(*log, 120, 1000);  // older timestamps after it, in later segments
  ASSERT_GT(log->segments().size(), 3u);
  auto t = log->offset_of_max_timestamp();
  ASSERT_TRUE(t.ok() && t->has_value());
  EXPECT_EQ((*t)->offset, appended->first_offset);
  EXPECT_EQ((*t)->timestamp, 90000);
}

TEST(LogTest, CleanReopenReadsNoSegmentData) {
  Fixture f;
  std::vector<Offset> bases;
  Offset leo;
  {
    auto log = f.open();
    bases = append_n(*log, 250);
    leo = log->log_end_offset();
    ASSERT_TRUE(log->close().ok());
  }
  auto log = f.open(RecoveryOptions{true, leo});
  EXPECT_EQ(log->load_stats().bytes_scanned, 0);
  EXPECT_EQ(log->load_stats().segments_recovered, 0);
  EXPECT_EQ(log->log_end_offset(), leo);
  EXPECT_EQ(log->recovery_point(), leo);
  EXPECT_EQ(read_all(*log, Offset(0)), bases);
  auto more = append_n(*log, 20);
  EXPECT_EQ(more.front(), leo);
  bases.insert(bases.end(), more.begin(), more.end());
  EXPECT_EQ(read_all(*log, Offset(0)), bases);
  auto t = log->offset_for_timestamp(5000 + 100 * 10);
  ASSERT_TRUE(t.ok() && t->has_value());
  EXPECT_EQ((*t)->offset, bases[100]);
}

TEST(LogTest, UncleanReopenScansOnlyFromRecoveryPoint) {
  Fixture f;
  Offset leo;
  {
    auto log = f.open();
    append_n(*log, 250);
    leo = log->log_end_offset();
    EXPECT_EQ(log->recovery_point(), log->active_segment_base());  // rolls fsync
  }  // no close: a crash
  auto log = f.open(RecoveryOptions{false, Offset(leo.value() - 3)});
  EXPECT_EQ(log->load_stats().segments_recovered, 1);
  EXPECT_GT(log->load_stats().bytes_scanned, 0);
  EXPECT_LE(log->load_stats().bytes_scanned, f.config.segment_bytes);
  EXPECT_EQ(log->load_stats().bytes_truncated, 0);
  EXPECT_EQ(log->log_end_offset(), leo);
  EXPECT_EQ(log->recovery_point(), leo);
}

TEST(LogTest, TornTailAtEveryBytePositionOfTheLastBatch) {
  // Build a log once and crash (no close). Then, for every byte position
  // of its last batch, copy it, cut the last .log there and reopen unclean:
  // exactly the batches before the cut batch remain, and appends go on.
  Fixture built;
  std::vector<Offset> all_bases;
  std::string last_log_name;
  int64_t last_batch_start = 0, seg_size = 0;
  {
    auto log = built.open();
    all_bases = append_n(*log, 40);
    last_log_name = Segment::log_path(built.dir(), log->active_segment_base()).filename().string();
    seg_size = int64_t(std::filesystem::file_size(built.dir() / last_log_name));
    last_batch_start = seg_size - int64_t(batch_for(39, 0).size());
  }
  int positions = 0;
  for (int64_t at = last_batch_start; at < seg_size; ++at) {
    Fixture f;
    std::filesystem::copy(built.dir(), f.dir(), std::filesystem::copy_options::recursive);
    std::filesystem::resize_file(f.dir() / last_log_name, uint64_t(at));
    auto log = f.open(RecoveryOptions{false, Offset(0)});
    ASSERT_NE(log, nullptr);
    std::vector<Offset> bases = all_bases;
    Offset torn_base = bases.back();
    bases.pop_back();
    EXPECT_EQ(log->log_end_offset(), torn_base) << "cut at " << at;
    EXPECT_EQ(log->load_stats().bytes_truncated, at - last_batch_start) << "cut at " << at;
    EXPECT_EQ(std::filesystem::file_size(f.dir() / last_log_name), uint64_t(last_batch_start));
    EXPECT_EQ(read_all(*log, Offset(0)), bases);
    auto again = append_n(*log, 2);
    EXPECT_EQ(again.front(), torn_base);
    bases.insert(bases.end(), again.begin(), again.end());
    EXPECT_EQ(read_all(*log, Offset(0)), bases);
    ++positions;
  }
  EXPECT_GT(positions, 60);
}

TEST(LogTest, FlippedByteMidLogTruncatesThereAndDropsLaterSegments) {
  Fixture f;
  std::vector<Offset> bases;
  std::filesystem::path victim;
  Offset victim_base;
  {
    auto log = f.open();
    bases = append_n(*log, 200);
    ASSERT_GT(log->segment_count(), 4u);
  }
  // Third segment: flip a byte inside its fifth batch's records.
  std::vector<std::filesystem::path> logs;
  for (auto& e : std::filesystem::directory_iterator(f.dir())) {
    if (e.path().extension() == ".log") logs.push_back(e.path());
  }
  std::sort(logs.begin(), logs.end());
  victim = logs[2];
  Offset seg_base(std::stoll(victim.stem().string()));
  int64_t pos = 0;
  Offset flipped_batch_base;
  {
    FILE* fp = std::fopen(victim.c_str(), "r+b");
    ASSERT_NE(fp, nullptr) << victim << ": " << std::strerror(errno);
    uint8_t header[batch_layout::kHeaderSize];
    for (int k = 0; k < 5; ++k) {
      ASSERT_EQ(std::fseek(fp, long(pos), SEEK_SET), 0);
      ASSERT_EQ(std::fread(header, 1, sizeof header, fp), sizeof header);
      pos += RecordBatchHeader(header).total_size();
    }
    ASSERT_EQ(std::fseek(fp, long(pos), SEEK_SET), 0);
    ASSERT_EQ(std::fread(header, 1, sizeof header, fp), sizeof header);
    flipped_batch_base = RecordBatchHeader(header).base_offset();
    long at = long(pos + int64_t(batch_layout::kHeaderSize) + 3);
    ASSERT_EQ(std::fseek(fp, at, SEEK_SET), 0);
    int c = std::fgetc(fp);
    ASSERT_EQ(std::fseek(fp, at, SEEK_SET), 0);
    std::fputc(c ^ 0x10, fp);
    std::fclose(fp);
  }
  victim_base = seg_base;
  auto log = f.open(RecoveryOptions{false, Offset(0)});
  EXPECT_EQ(log->log_end_offset(), flipped_batch_base);
  EXPECT_EQ(log->active_segment_base(), victim_base);
  EXPECT_EQ(log->segment_count(), 3u);
  EXPECT_GT(log->load_stats().segments_dropped, 0);
  EXPECT_EQ(std::filesystem::file_size(victim), uint64_t(pos));
  std::vector<Offset> expect(bases.begin(), std::find(bases.begin(), bases.end(), flipped_batch_base));
  EXPECT_EQ(read_all(*log, Offset(0)), expect);
}

TEST(LogTest, CleanReopenRebuildsOnlyBadIndexes) {
  Fixture f;
  std::vector<Offset> bases;
  Offset leo;
  {
    auto log = f.open();
    bases = append_n(*log, 150);
    leo = log->log_end_offset();
    ASSERT_TRUE(log->close().ok());
  }
  std::vector<std::filesystem::path> indexes;
  for (auto& e : std::filesystem::directory_iterator(f.dir())) {
    if (e.path().extension() == ".index") indexes.push_back(e.path());
  }
  std::sort(indexes.begin(), indexes.end());
  ASSERT_GT(indexes.size(), 4u);
  std::filesystem::resize_file(indexes[1], 1 << 14);  // zero tail
  std::filesystem::remove(indexes[2]);                // missing
  {
    FILE* fp = std::fopen(indexes[3].c_str(), "r+b");  // garbage at the end
    ASSERT_NE(fp, nullptr) << indexes[3] << ": " << std::strerror(errno);
    ASSERT_EQ(std::fseek(fp, -8, SEEK_END), 0);
    std::fputs("\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f", fp);
    std::fclose(fp);
  }
  auto log = f.open(RecoveryOptions{true, leo});
  EXPECT_EQ(log->load_stats().segments_recovered, 3);
  EXPECT_GT(log->load_stats().bytes_scanned, 0);
  EXPECT_LE(log->load_stats().bytes_scanned, 3 * f.config.segment_bytes);
  EXPECT_EQ(log->load_stats().bytes_truncated, 0);
  EXPECT_EQ(log->log_end_offset(), leo);
  EXPECT_EQ(read_all(*log, Offset(0)), bases);
}

TEST(LogTest, PreallocatedSegmentsAreTrimmedAndRecovered) {
  Fixture f;
  f.config.preallocate = true;
  std::vector<Offset> bases;
  std::filesystem::path active;
  {
    auto log = f.open();
    bases = append_n(*log, 60);
    active = Segment::log_path(f.dir(), log->active_segment_base());
    EXPECT_EQ(std::filesystem::file_size(active), uint64_t(f.config.segment_bytes));
  }  // crash: the active .log ends in zeros
  {
    auto log = f.open(RecoveryOptions{false, Offset(0)});
    EXPECT_EQ(log->log_end_offset(), bases.back() + ((59 % 4) + 1));
    EXPECT_EQ(read_all(*log, Offset(0)), bases);
    ASSERT_TRUE(log->close().ok());
    EXPECT_LT(std::filesystem::file_size(active), uint64_t(f.config.segment_bytes));
  }
  auto log = f.open(RecoveryOptions{true, Offset(0)});
  EXPECT_EQ(log->load_stats().bytes_scanned, 0);
  EXPECT_EQ(read_all(*log, Offset(0)), bases);
}

TEST(LogTest, TruncateToAcrossSegmentsThenAppend) {
  Fixture f;
  auto log = f.open();
  auto bases = append_n(*log, 200);
  Offset target = bases[57] + 1;  // mid-batch when batch 57 has > 1 record
  ASSERT_TRUE(log->truncate_to(target).ok());
  Offset expect_end = (bases[58] - bases[57] > 1) ? bases[57] : bases[58];
  EXPECT_EQ(log->log_end_offset(), expect_end);
  EXPECT_LE(log->recovery_point(), expect_end);
  auto more = append_n(*log, 30);
  EXPECT_EQ(more.front(), expect_end);
  ASSERT_TRUE(log->close().ok());
  auto reopened = f.open(RecoveryOptions{true, more.back() + 1});
  std::vector<Offset> all(bases.begin(), std::find(bases.begin(), bases.end(), expect_end));
  all.insert(all.end(), more.begin(), more.end());
  EXPECT_EQ(read_all(*reopened, Offset(0)), all);
  EXPECT_EQ(reopened->load_stats().bytes_scanned, 0);
}

TEST(LogTest, TruncateToTheLogEndDropsAnEpochStartedThereWithoutRecords) {
  // A broker elected leader assigns its epoch at its log end
  // (assign_leader_epoch) and may lose the leadership before any append:
  // cutting to the log end drops that entry (Kafka's UnifiedLog.truncateTo),
  // so as a follower it no longer names an epoch the new leader never had.
  Fixture f;
  auto log = f.open();
  append_n(*log, 3);
  const Offset end = log->log_end_offset();
  ASSERT_TRUE(log->assign_leader_epoch(LeaderEpoch(9), end).ok());
  ASSERT_EQ(log->leader_epochs().back(), (EpochEntry{LeaderEpoch(9), end}));
  ASSERT_TRUE(log->truncate_to(end).ok());
  EXPECT_EQ(log->log_end_offset(), end) << "no record cut";
  ASSERT_FALSE(log->leader_epochs().empty());
  EXPECT_EQ(log->leader_epochs().back(), (EpochEntry{LeaderEpoch(7), Offset(0)})) << "the records' epoch stays";
  ASSERT_TRUE(log->truncate_to(end + 10).ok());
  EXPECT_EQ(log->log_end_offset(), end) << "a cut past the end cuts nothing";
}

TEST(LogTest, TruncateFullyAndStartAt) {
  Fixture f;
  auto log = f.open();
  append_n(*log, 50);
  ASSERT_TRUE(log->truncate_fully_and_start_at(Offset(1000)).ok());
  EXPECT_EQ(log->log_start_offset(), Offset(1000));
  EXPECT_EQ(log->log_end_offset(), Offset(1000));
  EXPECT_EQ(log->segment_count(), 1u);
  auto more = append_n(*log, 3);
  EXPECT_EQ(more.front(), Offset(1000));
}

TEST(LogTest, LogAppendTimeStampsBatchesAndKeepsCrcValid) {
  Fixture f;
  f.config.message_timestamp_type = TimestampType::kLogAppendTime;
  auto log = f.open();
  Bytes b = batch_for(3, 42);
  auto r = log->append(b.data(), b.size(), LeaderEpoch(1));
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->log_append_time_ms.has_value());
  EXPECT_EQ(*r->log_append_time_ms, f.clock.wall_ms());
  RecordBatchHeader h(b.data());
  EXPECT_TRUE(h.log_append_time());
  EXPECT_EQ(h.max_timestamp(), f.clock.wall_ms());
  EXPECT_EQ(validate_batch(b), BatchFault::kNone);
}

TEST(LogTest, AppendRejectsOversizedAndBrokenInput) {
  Fixture f;
  f.config.max_message_bytes = 100;
  auto log = f.open();
  Bytes big = make_batch(BatchSpec{Offset(0), 1, 0, 1, 200});
  auto r = log->append(big.data(), big.size(), LeaderEpoch(0));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kInvalidArgument);
  Bytes small = make_batch(BatchSpec{Offset(0), 1, 0, 1, 5});
  r = log->append(small.data(), small.size() - 1, LeaderEpoch(0));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kCorrupt);
  EXPECT_EQ(log->log_end_offset(), Offset(0));
}

TEST(LogTest, MultiBatchAppendIsOneUnit) {
  Fixture f;
  auto log = f.open();
  Bytes req;
  for (int i = 0; i < 5; ++i) test::append_to(req, batch_for(i, 100 + i));
  auto r = log->append(req.data(), req.size(), LeaderEpoch(2));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->first_offset, Offset(0));
  EXPECT_EQ(r->last_offset, Offset(1 + 2 + 3 + 4 + 1 - 1));
  EXPECT_EQ(log->log_end_offset(), Offset(11));
  EXPECT_EQ(read_all(*log, Offset(4)).front(), Offset(3));
}

TEST(LogTest, FlushPolicies) {
  Fixture f;
  f.config.segment_bytes = 1 << 20;
  f.config.flush_messages = 10;
  auto log = f.open();
  append_n(*log, 3);  // 1+2+3 = 6 messages
  EXPECT_EQ(log->recovery_point(), Offset(0));
  append_n(*log, 2);  // +1+2 = 9
  EXPECT_EQ(log->recovery_point(), Offset(0));
  append_n(*log, 1);  // +1 = 10: flush
  EXPECT_EQ(log->recovery_point(), log->log_end_offset());
  log->set_config([&] { LogConfig c = f.config; c.flush_ms = 1000; return c; }());
  append_n(*log, 1);
  ASSERT_TRUE(log->maybe_flush(f.clock.monotonic_ms() + 999).ok());
  EXPECT_LT(log->recovery_point(), log->log_end_offset());
  ASSERT_TRUE(log->maybe_flush(f.clock.monotonic_ms() + 1000).ok());
  EXPECT_EQ(log->recovery_point(), log->log_end_offset());
}

TEST(LogTest, RetentionBySizeAndTime) {
  Fixture f;
  auto log = f.open();
  append_n(*log, 300, 5000);
  size_t segments = log->segment_count();
  LogConfig c = f.config;
  c.retention_bytes = 4 * f.config.segment_bytes;
  log->set_config(c);
  auto n = log->delete_old_segments(0);
  ASSERT_TRUE(n.ok());
  EXPECT_GT(*n, 0);
  EXPECT_LE(log->size_bytes(), c.retention_bytes + f.config.segment_bytes);
  EXPECT_EQ(log->log_start_offset(), log->read(log->log_start_offset(), 1, Offset(INT64_MAX), true)
                                         .value().log_start_offset);
  c.retention_bytes = -1;
  c.retention_ms = 1000;
  log->set_config(c);
  n = log->delete_old_segments(5000 + 300 * 10 + 1000 + 1);  // everything is old
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(log->segment_count(), 1u);  // the expired active segment was rolled and deleted
  EXPECT_EQ(log->log_start_offset(), log->log_end_offset());
  EXPECT_LT(log->segment_count(), segments);
}

}  // namespace
}  // namespace samsa

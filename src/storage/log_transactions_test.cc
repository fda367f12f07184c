// The Log's transactions: the last stable offset, aborts recorded in the
// `.txnindex`, what a read_committed fetch is told, markers refused for an
// old epoch, and all of it rebuilt after a clean close, a crash, a
// truncation, a follower's append, and deleted with its segment.
#include <gtest/gtest.h>

#include "model/control_record.h"
#include "storage/log.h"
#include "storage/test_batches.h"

namespace samsa {
namespace {

const TopicPartition kTp{"txn", PartitionId(0)};

Bytes txn_batch(int64_t pid, int16_t epoch, int32_t seq, int32_t records) {
  test::BatchSpec s;
  s.records = records;
  s.producer_id = pid;
  s.producer_epoch = epoch;
  s.base_sequence = seq;
  s.attributes = batch_attr::kTransactional;
  s.value_bytes = 60;
  return test::make_batch(s);
}

struct Fixture {
  test::TempDir tmp;
  ManualClock clock{1'000'000};
  std::unique_ptr<Log> open(RecoveryOptions opts = {}) {
    LogConfig config;
    config.segment_bytes = 1024;  // several segments
    config.file_delete_delay_ms = 0;
    auto log = Log::open(test::files(), tmp.path() / kTp.to_string(), kTp, config, clock, opts);
    EXPECT_TRUE(log.ok()) << (log.ok() ? "" : log.error().to_string());
    return log.ok() ? std::move(log).value() : nullptr;
  }
  static AppendResult append(Log& log, Bytes b) {
    auto r = log.append(b.data(), b.size(), LeaderEpoch(1));
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : AppendResult{};
  }
  static AppendResult mark(Log& log, int64_t pid, int16_t epoch, bool commit, int32_t coordinator_epoch = 0) {
    auto r = log.append_marker(ProducerId(pid), ProducerEpoch(epoch),
                               {commit ? ControlType::kCommit : ControlType::kAbort, coordinator_epoch},
                               LeaderEpoch(1), false);
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : AppendResult{};
  }
};

// p1 writes 0-2 and 6-7 and aborts at 8; p2 writes 3-5 and stays open.
struct Scenario {
  Offset p2_first{3};
  Offset abort_marker{8};
};

Scenario write_scenario(Log& log) {
  Fixture::append(log, txn_batch(1, 0, 0, 3));
  Fixture::append(log, txn_batch(2, 0, 0, 3));
  Fixture::append(log, txn_batch(1, 0, 3, 2));
  AppendResult marker = Fixture::mark(log, 1, 0, /*commit=*/false);
  EXPECT_EQ(marker.first_offset, Offset(8));
  return {};
}

std::vector<AbortedTxn> p1_aborted() { return {{ProducerId(1), Offset(0), Offset(8), Offset(3)}}; }

TEST(LogTransactions, LastStableOffsetStopsAtTheFirstOpenTransaction) {
  Fixture f;
  auto log = f.open();
  Fixture::append(*log, txn_batch(-1, -1, -1, 2));  // plain records 0-1
  EXPECT_EQ(log->last_stable_offset(Offset(2)), Offset(2));
  Fixture::append(*log, txn_batch(1, 0, 0, 3));  // 2-4, open
  EXPECT_EQ(log->last_stable_offset(Offset(5)), Offset(2));
  EXPECT_EQ(log->last_stable_offset(Offset(1)), Offset(1));  // never above the HW
  AppendResult commit = Fixture::mark(*log, 1, 0, true);     // marker at 5
  // Undecided until the HW passes the marker (a new leader without it would hold it open).
  EXPECT_EQ(log->last_stable_offset(Offset(5)), Offset(2));
  EXPECT_EQ(log->last_stable_offset(Offset(6)), Offset(6));
  EXPECT_EQ(commit.first_offset, Offset(5));
  EXPECT_TRUE(log->aborted_txns(Offset(0), Offset(6)).empty());  // a commit records no abort
}

TEST(LogTransactions, AbortRecordedInTheTxnIndexAndAnsweredToFetches) {
  Fixture f;
  auto log = f.open();
  write_scenario(*log);
  EXPECT_EQ(log->last_stable_offset(Offset(9)), Offset(3));  // p2 still open
  EXPECT_EQ(log->aborted_txns(Offset(0), Offset(9)), p1_aborted());
  EXPECT_EQ(log->aborted_txns(Offset(8), Offset(9)), p1_aborted());  // the marker's own offset
  EXPECT_TRUE(log->aborted_txns(Offset(9), Offset(20)).empty());     // a fetch after it
  const Segment& seg = *log->segments().rbegin()->second;
  EXPECT_TRUE(std::filesystem::exists(txn_index_path(log->dir(), seg.base_offset())));
  EXPECT_EQ(std::filesystem::file_size(txn_index_path(log->dir(), seg.base_offset())), kTxnIndexEntryBytes);
  Fixture::mark(*log, 2, 0, true);
  EXPECT_EQ(log->last_stable_offset(Offset(10)), Offset(10));
}

TEST(LogTransactions, MarkerWithAnOlderEpochIsRefusedAndWritesNothing) {
  Fixture f;
  auto log = f.open();
  Fixture::append(*log, txn_batch(1, 4, 0, 3));
  Offset end = log->log_end_offset();
  EXPECT_EQ(Fixture::mark(*log, 1, 3, false).producer_fault, ProducerFault::kInvalidProducerEpoch);
  EXPECT_EQ(log->log_end_offset(), end);
  EXPECT_EQ(log->last_stable_offset(end), Offset(0));
  auto higher = log->append_marker(ProducerId(1), ProducerEpoch(4), {ControlType::kAbort, 0}, LeaderEpoch(1),
                                   /*require_higher_epoch=*/true);
  ASSERT_TRUE(higher.ok());
  EXPECT_EQ(higher->producer_fault, ProducerFault::kInvalidProducerEpoch);
  EXPECT_FALSE(Fixture::mark(*log, 1, 4, false).producer_fault);
  EXPECT_EQ(log->last_stable_offset(log->log_end_offset()), log->log_end_offset());
}

TEST(LogTransactions, RebuiltAfterCleanCloseAndAfterACrash) {
  Fixture f;
  {
    auto log = f.open();
    write_scenario(*log);
    for (int i = 0; i < 20; ++i) Fixture::append(*log, txn_batch(-1, -1, -1, 2));  // rolls past them
    ASSERT_GT(log->segment_count(), 2u);
    EXPECT_EQ(log->aborted_txns(Offset(0), log->log_end_offset()), p1_aborted()) << "before close";
    ASSERT_TRUE(log->close().ok());
  }
  Offset end;
  {
    auto log = f.open({.had_clean_shutdown = true, .recovery_point = Offset(48)});
    end = log->log_end_offset();
    EXPECT_EQ(log->last_stable_offset(end), Offset(3));  // from the snapshot's CurrentTxnFirstOffset
    EXPECT_EQ(log->aborted_txns(Offset(0), end), p1_aborted());
    Fixture::append(*log, txn_batch(3, 0, 0, 1));
    Fixture::mark(*log, 3, 0, false);  // a second abort, after the last snapshot
    // Destroyed without close: as a crash.
  }
  auto log = f.open();
  end = log->log_end_offset();
  auto aborted = log->aborted_txns(Offset(0), end);
  ASSERT_EQ(aborted.size(), 2u);
  EXPECT_EQ(aborted[0], p1_aborted()[0]);
  EXPECT_EQ(aborted[1].producer_id, ProducerId(3));
  EXPECT_EQ(aborted[1].last_offset, end - 1);
  EXPECT_EQ(log->last_stable_offset(end), Offset(3));
}

TEST(LogTransactions, TruncationBelowAMarkerReopensItsTransaction) {
  Fixture f;
  auto log = f.open();
  write_scenario(*log);
  ASSERT_TRUE(log->truncate_to(Offset(8)).ok());
  EXPECT_TRUE(log->aborted_txns(Offset(0), Offset(8)).empty());
  EXPECT_EQ(log->last_stable_offset(Offset(8)), Offset(0));  // p1 open again
  const Segment& seg = *log->segments().rbegin()->second;
  EXPECT_EQ(std::filesystem::file_size(txn_index_path(log->dir(), seg.base_offset())), 0u);
}

TEST(LogTransactions, FollowerAppendOfTheLeadersMarkerRecordsTheAbort) {
  Fixture leader_dir;
  Fixture follower_dir;
  auto leader = leader_dir.open();
  auto follower = follower_dir.open();
  write_scenario(*leader);
  auto read = leader->read(Offset(0), 1 << 20, leader->log_end_offset(), true);
  ASSERT_TRUE(read.ok());
  auto bytes = read_region(read->records);
  ASSERT_TRUE(bytes.ok());
  ASSERT_TRUE(follower->append_as_follower(*bytes).ok());
  EXPECT_EQ(follower->aborted_txns(Offset(0), Offset(9)), p1_aborted());
  EXPECT_EQ(follower->last_stable_offset(Offset(9)), Offset(3));
}

TEST(LogTransactions, RetentionDeletesTheTxnIndexWithItsSegment) {
  Fixture f;
  auto log = f.open();
  write_scenario(*log);
  Fixture::mark(*log, 2, 0, false);
  for (int i = 0; i < 20; ++i) Fixture::append(*log, txn_batch(-1, -1, -1, 2));
  ASSERT_GT(log->segment_count(), 2u);
  const Offset first_base = log->segments().begin()->first;
  const auto index = txn_index_path(log->dir(), first_base);
  ASSERT_TRUE(std::filesystem::exists(index));
  ASSERT_TRUE(log->advance_log_start_offset(log->active_segment_base()).ok());
  auto deleted = log->delete_old_segments(f.clock.wall_ms());
  ASSERT_TRUE(deleted.ok());
  ASSERT_TRUE(log->delete_pending_files(f.clock.monotonic_ms() + 1).ok());
  EXPECT_FALSE(std::filesystem::exists(index));
  std::filesystem::path doomed = index;
  doomed += ".deleted";
  EXPECT_FALSE(std::filesystem::exists(doomed));
  EXPECT_TRUE(log->aborted_txns(log->log_start_offset(), log->log_end_offset()).empty());
}

}  // namespace
}  // namespace samsa

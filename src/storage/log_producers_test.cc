// The Log's producer state: duplicates answered with the original offsets,
// faults refused with nothing written, the state rebuilt at open (after a
// clean close and after a crash), applied by follower appends, cut by
// truncation.
#include <gtest/gtest.h>

#include "storage/log.h"
#include "storage/test_batches.h"

namespace samsa {
namespace {

const TopicPartition kTp{"idem", PartitionId(0)};

Bytes producer_batch(int64_t pid, int16_t epoch, int32_t seq, int32_t records, int64_t base_offset = 0) {
  test::BatchSpec s;
  s.base_offset = Offset(base_offset);
  s.records = records;
  s.producer_id = pid;
  s.producer_epoch = epoch;
  s.base_sequence = seq;
  return test::make_batch(s);
}

struct Fixture {
  test::TempDir tmp;
  ManualClock clock{1'000'000};
  std::unique_ptr<Log> open(RecoveryOptions opts = {}) {
    LogConfig config;
    config.segment_bytes = 1024;  // several segments
    auto log = Log::open(test::files(), tmp.path() / kTp.to_string(), kTp, config, clock, opts);
    EXPECT_TRUE(log.ok()) << (log.ok() ? "" : log.error().to_string());
    return log.ok() ? std::move(log).value() : nullptr;
  }
  static AppendResult append(Log& log, Bytes b) {
    auto r = log.append(b.data(), b.size(), LeaderEpoch(1));
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : AppendResult{};
  }
};

TEST(LogProducers, DuplicateAnsweredWithOriginalOffsetsAndNotWritten) {
  Fixture f;
  auto log = f.open();
  Fixture::append(*log, producer_batch(-1, -1, -1, 3));  // a plain batch first: offsets 0-2
  AppendResult first = Fixture::append(*log, producer_batch(7, 0, 0, 4));
  EXPECT_EQ(first.first_offset, Offset(3));
  EXPECT_FALSE(first.duplicate);
  Offset end = log->log_end_offset();
  AppendResult retry = Fixture::append(*log, producer_batch(7, 0, 0, 4));
  EXPECT_TRUE(retry.duplicate);
  EXPECT_EQ(retry.first_offset, Offset(3));
  EXPECT_EQ(retry.last_offset, Offset(6));
  EXPECT_EQ(log->log_end_offset(), end);
}

TEST(LogProducers, FaultsWriteNothing) {
  Fixture f;
  auto log = f.open();
  Fixture::append(*log, producer_batch(7, 2, 0, 4));
  Offset end = log->log_end_offset();
  EXPECT_EQ(Fixture::append(*log, producer_batch(7, 2, 9, 1)).producer_fault, ProducerFault::kOutOfOrderSequence);
  EXPECT_EQ(Fixture::append(*log, producer_batch(7, 1, 4, 1)).producer_fault, ProducerFault::kInvalidProducerEpoch);
  EXPECT_EQ(log->log_end_offset(), end);
  EXPECT_FALSE(Fixture::append(*log, producer_batch(7, 2, 4, 1)).producer_fault);
}

TEST(LogProducers, StateRebuiltAtOpenAfterCleanCloseAndCrash) {
  Fixture f;
  {
    auto log = f.open();
    for (int i = 0; i < 40; ++i) Fixture::append(*log, producer_batch(7, 0, i * 5, 5));
    ASSERT_GT(log->segment_count(), 2u);
    ASSERT_TRUE(log->close().ok());
  }
  {
    auto log = f.open({.had_clean_shutdown = true, .recovery_point = Offset(200)});
    AppendResult retry = Fixture::append(*log, producer_batch(7, 0, 195, 5));
    EXPECT_TRUE(retry.duplicate);
    EXPECT_EQ(retry.first_offset, Offset(195));
    Fixture::append(*log, producer_batch(7, 0, 200, 5));
    // Destroyed without close: as a crash.
  }
  auto log = f.open();
  EXPECT_EQ(log->producer_state().find(ProducerId(7))->last_seq(), 204);
  EXPECT_TRUE(Fixture::append(*log, producer_batch(7, 0, 200, 5)).duplicate);
}

TEST(LogProducers, FollowerAppendsApplyTheState) {
  Fixture f;
  auto log = f.open();
  Bytes fetched = producer_batch(9, 3, 0, 2, /*base_offset=*/0);
  ASSERT_TRUE(log->append_as_follower(fetched).ok());
  // Now the leader (after failover): the client's retry is a duplicate.
  AppendResult retry = Fixture::append(*log, producer_batch(9, 3, 0, 2));
  EXPECT_TRUE(retry.duplicate);
  EXPECT_EQ(retry.first_offset, Offset(0));
}

TEST(LogProducers, TruncationForgetsTruncatedBatches) {
  Fixture f;
  auto log = f.open();
  Fixture::append(*log, producer_batch(7, 0, 0, 2));
  Fixture::append(*log, producer_batch(7, 0, 2, 2));
  ASSERT_TRUE(log->truncate_to(Offset(2)).ok());
  AppendResult again = Fixture::append(*log, producer_batch(7, 0, 2, 2));
  EXPECT_FALSE(again.duplicate);
  EXPECT_EQ(again.first_offset, Offset(2));
}

}  // namespace
}  // namespace samsa

// Log::append_as_follower and the leader-epoch checkpoint around it: the
// follower's log is the leader's byte for byte, and survives a restart.
#include <gtest/gtest.h>

#include "base/file_region.h"
#include "model/record_batch_header.h"
#include "storage/file_util.h"
#include "storage/log.h"
#include "storage/test_batches.h"

namespace samsa {
namespace {

const TopicPartition kTp{"replicated", PartitionId(0)};

struct Node {
  test::TempDir tmp;
  ManualClock clock{1'000'000};
  LogConfig config;
  std::unique_ptr<Log> log;

  explicit Node(LogConfig c = {}) : config(c) { reopen(); }
  void reopen() {
    log.reset();
    auto opened = Log::open(test::files(), tmp.path() / kTp.to_string(), kTp, config, clock, {});
    ASSERT_TRUE(opened.ok()) << opened.error().to_string();
    log = std::move(opened).value();
  }
};

Bytes batch(int records, uint8_t fill, int64_t ts = 5000) {
  return test::make_batch(test::BatchSpec{Offset(0), records, ts, 3, 20, fill});
}

// The whole log's bytes, segment by segment.
Bytes all_bytes(Log& log) {
  Bytes out;
  Offset from = log.log_start_offset();
  for (int guard = 0; guard < 1000 && from < log.log_end_offset(); ++guard) {
    auto r = log.read(from, 1 << 20, Offset(INT64_MAX), true);
    EXPECT_TRUE(r.ok());
    if (!r.ok() || r->records.size == 0) break;
    Bytes bytes = read_region(r->records).value();
    test::append_to(out, bytes);
    size_t at = 0;
    while (at < bytes.size()) {
      RecordBatchHeader h(bytes.data() + at);
      from = h.last_offset() + 1;
      at += size_t(h.total_size());
    }
  }
  return out;
}

// A leader log: 3 batches in epoch 3, then 2 in epoch 5.
void fill_leader(Log& leader) {
  for (int i = 0; i < 5; ++i) {
    Bytes b = batch(i + 1, uint8_t('a' + i));
    ASSERT_TRUE(leader.append(b.data(), b.size(), LeaderEpoch(i < 3 ? 3 : 5)).ok());
  }
}

Bytes with_header(Bytes b, Offset base, LeaderEpoch epoch) {
  set_base_offset(b.data(), base);  // neither is covered by the CRC
  set_partition_leader_epoch(b.data(), epoch);
  return b;
}

TEST(LogFollowerAppend, KeepsTheLeadersBytesOffsetsAndEpochs) {
  Node leader, follower;
  fill_leader(*leader.log);
  Bytes fetched = all_bytes(*leader.log);
  auto r = follower.log->append_as_follower(fetched);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->first_offset, Offset(0));
  EXPECT_EQ(r->last_offset, Offset(14));
  EXPECT_EQ(r->last_epoch, LeaderEpoch(5));
  EXPECT_EQ(follower.log->log_end_offset(), leader.log->log_end_offset());
  EXPECT_EQ(all_bytes(*follower.log), fetched);
  EXPECT_EQ(follower.log->leader_epochs(), leader.log->leader_epochs());
  EXPECT_EQ(follower.log->leader_epochs(),
            (std::vector<EpochEntry>{{LeaderEpoch(3), Offset(0)}, {LeaderEpoch(5), Offset(6)}}));
}

TEST(LogFollowerAppend, NeverRestampsTimestamps) {
  LogConfig append_time;
  append_time.message_timestamp_type = TimestampType::kLogAppendTime;
  Node follower(append_time);
  Bytes b = with_header(batch(2, 'q', 1234), Offset(0), LeaderEpoch(1));
  ASSERT_TRUE(follower.log->append_as_follower(b).ok());
  EXPECT_EQ(all_bytes(*follower.log), b);
}

TEST(LogFollowerAppend, RefusesBatchesBelowTheLogEndOrOutOfOrder) {
  Node follower;
  ASSERT_TRUE(follower.log->append_as_follower(with_header(batch(3, 'a'), Offset(0), LeaderEpoch(1))).ok());
  // Starts inside what the log has.
  auto below = follower.log->append_as_follower(with_header(batch(1, 'b'), Offset(2), LeaderEpoch(1)));
  ASSERT_FALSE(below.ok());
  EXPECT_EQ(below.error().kind(), ErrorKind::kCorrupt);
  // Second batch overlaps the first: nothing of the append is written.
  Bytes two = with_header(batch(2, 'c'), Offset(3), LeaderEpoch(1));
  test::append_to(two, with_header(batch(1, 'd'), Offset(4), LeaderEpoch(1)));
  EXPECT_FALSE(follower.log->append_as_follower(two).ok());
  EXPECT_EQ(follower.log->log_end_offset(), Offset(3));
  // A forward gap (a compacted leader) is the leader's offsets, kept.
  ASSERT_TRUE(follower.log->append_as_follower(with_header(batch(1, 'e'), Offset(10), LeaderEpoch(1))).ok());
  EXPECT_EQ(follower.log->log_end_offset(), Offset(11));
  auto read = follower.log->read(Offset(3), 1 << 20, Offset(INT64_MAX), true);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(RecordBatchHeader(read_region(read->records).value().data()).base_offset(), Offset(10));
}

TEST(LogFollowerAppend, RefusesEpochsThatGoDown) {
  Node follower;
  Bytes down = with_header(batch(1, 'a'), Offset(0), LeaderEpoch(4));
  test::append_to(down, with_header(batch(1, 'b'), Offset(1), LeaderEpoch(2)));
  EXPECT_FALSE(follower.log->append_as_follower(down).ok());
  EXPECT_EQ(follower.log->log_end_offset(), Offset(0));
  EXPECT_TRUE(follower.log->leader_epochs().empty());
  ASSERT_TRUE(follower.log->append_as_follower(with_header(batch(1, 'c'), Offset(0), LeaderEpoch(4))).ok());
  // Below the cache's latest epoch.
  EXPECT_FALSE(follower.log->append_as_follower(with_header(batch(1, 'd'), Offset(1), LeaderEpoch(3))).ok());
  EXPECT_EQ(follower.log->log_end_offset(), Offset(1));
}

TEST(LogFollowerAppend, RefusesABadCrc) {
  Node follower;
  Bytes b = with_header(batch(2, 'a'), Offset(0), LeaderEpoch(1));
  b[b.size() - 3] ^= 0x40;  // a value byte
  auto r = follower.log->append_as_follower(b);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kCorrupt);
  EXPECT_EQ(follower.log->log_end_offset(), Offset(0));
}

TEST(LogFollowerAppend, EpochCheckpointFollowsTruncationAndRestarts) {
  Node leader, follower;
  fill_leader(*leader.log);
  ASSERT_TRUE(follower.log->append_as_follower(all_bytes(*leader.log)).ok());
  // Cut inside epoch 3 (offset 6 starts epoch 5): epoch 5 goes.
  ASSERT_TRUE(follower.log->truncate_to(Offset(6)).ok());
  const std::vector<EpochEntry> after_cut{{LeaderEpoch(3), Offset(0)}};
  EXPECT_EQ(follower.log->leader_epochs(), after_cut);
  // A crash (no close): the checkpoint on disk is what is read back.
  follower.reopen();
  EXPECT_EQ(follower.log->log_end_offset(), Offset(6));
  EXPECT_EQ(follower.log->leader_epochs(), after_cut);
  // Epoch 7 continues after the cut and is checkpointed too.
  ASSERT_TRUE(follower.log->append_as_follower(with_header(batch(2, 'z'), Offset(6), LeaderEpoch(7))).ok());
  ASSERT_TRUE(follower.log->close().ok());
  follower.reopen();
  EXPECT_EQ(follower.log->leader_epochs(),
            (std::vector<EpochEntry>{{LeaderEpoch(3), Offset(0)}, {LeaderEpoch(7), Offset(6)}}));
  auto text = file_util::read_file(test::files(), follower.log->dir() / kLeaderEpochCheckpointFile, 4096);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "0\n2\n3 0\n7 6\n");  // Kafka's LeaderEpochCheckpointFile
}

}  // namespace
}  // namespace samsa

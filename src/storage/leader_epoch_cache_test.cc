#include "storage/leader_epoch_cache.h"

#include <gtest/gtest.h>

#include <fstream>

#include "storage/log.h"
#include "storage/test_batches.h"

namespace samsa {
namespace {

namespace fs = std::filesystem;

std::vector<EpochEntry> entries(std::initializer_list<std::pair<int32_t, int64_t>> l) {
  std::vector<EpochEntry> out;
  for (auto [e, o] : l) out.push_back(EpochEntry{LeaderEpoch(e), Offset(o)});
  return out;
}

TEST(LeaderEpochCache, KafkaTextFormat) {
  EXPECT_EQ(format_leader_epoch_checkpoint(entries({{0, 0}, {3, 120}})), "0\n2\n0 0\n3 120\n");
  EXPECT_EQ(parse_leader_epoch_checkpoint("0\n2\n0 0\n3 120\n").value(), entries({{0, 0}, {3, 120}}));
  for (const char* bad : {"", "1\n0\n", "0\n2\n0 0\n", "0\n1\nx 1\n", "0\n2\n3 5\n2 6\n", "0\n1\n1 5"}) {
    EXPECT_FALSE(parse_leader_epoch_checkpoint(bad).ok()) << bad;
  }
}

TEST(LeaderEpochCache, AssignTruncateAndLookup) {
  test::TempDir tmp;
  LeaderEpochCache c = LeaderEpochCache::load(test::files(), tmp.path());
  EXPECT_TRUE(c.entries().empty());
  ASSERT_TRUE(c.assign(LeaderEpoch(1), Offset(0)).ok());
  ASSERT_TRUE(c.assign(LeaderEpoch(1), Offset(10)).ok());  // same epoch: ignored
  ASSERT_TRUE(c.assign(LeaderEpoch(3), Offset(20)).ok());
  ASSERT_TRUE(c.assign(LeaderEpoch(5), Offset(50)).ok());
  EXPECT_EQ(c.entries(), entries({{1, 0}, {3, 20}, {5, 50}}));
  EXPECT_EQ(c.end_offset_for(LeaderEpoch(1), Offset(70)), (EpochEntry{LeaderEpoch(1), Offset(20)}));
  EXPECT_EQ(c.end_offset_for(LeaderEpoch(4), Offset(70)), (EpochEntry{LeaderEpoch(3), Offset(50)}));
  EXPECT_EQ(c.end_offset_for(LeaderEpoch(9), Offset(70)), (EpochEntry{LeaderEpoch(5), Offset(70)}));
  EXPECT_FALSE(c.end_offset_for(LeaderEpoch(0), Offset(70)).has_value());
  EXPECT_EQ(LeaderEpochCache::load(test::files(), tmp.path()).entries(), c.entries());  // persisted
  ASSERT_TRUE(c.truncate_from_end(Offset(50)).ok());
  EXPECT_EQ(c.entries(), entries({{1, 0}, {3, 20}}));
  ASSERT_TRUE(c.truncate_from_start(Offset(25)).ok());
  EXPECT_EQ(c.entries(), entries({{3, 25}}));
  EXPECT_EQ(LeaderEpochCache::load(test::files(), tmp.path()).entries(), entries({{3, 25}}));
  std::ofstream(tmp.path() / kLeaderEpochCheckpointFile) << "garbage";
  EXPECT_TRUE(LeaderEpochCache::load(test::files(), tmp.path()).entries().empty());
}

TEST(LeaderEpochCache, LogKeepsItInStep) {
  test::TempDir tmp;
  ManualClock clock(1'000'000);
  LogConfig cfg;
  cfg.segment_bytes = 1024;
  fs::path dir = tmp.path() / "t-0";
  auto log = Log::open(test::files(), dir, TopicPartition{"t", PartitionId(0)}, cfg, clock, {}).value();
  auto append = [&](int epoch, int n) {
    for (int i = 0; i < n; ++i) {
      Bytes b = test::make_batch(test::BatchSpec{Offset(0), 2, 1000, 1, 100});
      ASSERT_TRUE(log->append(b.data(), b.size(), LeaderEpoch(epoch)).ok());
    }
  };
  append(0, 10);  // offsets 0..19
  append(2, 10);  // 20..39
  append(4, 10);  // 40..59
  EXPECT_EQ(log->leader_epochs(), entries({{0, 0}, {2, 20}, {4, 40}}));
  EXPECT_EQ(log->end_offset_for_epoch(LeaderEpoch(2)), (EpochEntry{LeaderEpoch(2), Offset(40)}));
  ASSERT_TRUE(log->truncate_to(Offset(30)).ok());
  EXPECT_EQ(log->leader_epochs(), entries({{0, 0}, {2, 20}}));
  ASSERT_TRUE(log->advance_log_start_offset(Offset(24)).ok());
  EXPECT_EQ(log->leader_epochs(), entries({{2, 24}}));
  append(3, 1);
  ASSERT_TRUE(log->close().ok());
  log = Log::open(test::files(), dir, TopicPartition{"t", PartitionId(0)}, cfg, clock, RecoveryOptions{.log_start_offset = Offset(24)})
            .value();
  EXPECT_EQ(log->leader_epochs(), entries({{2, 24}, {3, 30}}));
}

}  // namespace
}  // namespace samsa

#include <gtest/gtest.h>

#include "storage/log_manager.h"
#include "storage/test_batches.h"

namespace samsa {
namespace {

TEST(ReplicationOffsetCheckpoint, WrittenFromTheSourceAndReadBackClamped) {
  test::TempDir tmp;
  ManualClock clock(1'000'000);
  LogManagerConfig mc;
  mc.log_dirs = {tmp.path()};
  LogConfig cfg;
  TopicPartition a{"a", PartitionId(0)}, b{"b", PartitionId(2)};
  {
    auto m = LogManager::open(test::files(), mc, cfg, clock).value();
    for (const auto& tp : {a, b}) {
      Log* log = m->create_log(tp, cfg).value();
      for (int i = 0; i < 5; ++i) {
        Bytes batch = test::make_batch(test::BatchSpec{});
        ASSERT_TRUE(log->append(batch.data(), batch.size(), LeaderEpoch(0)).ok());
      }
    }
    EXPECT_FALSE(m->checkpointed_high_watermark(a).has_value());
    m->set_high_watermark_source([&](const TopicPartition& tp) -> std::optional<Offset> {
      if (tp == a) return Offset(3);
      if (tp == b) return Offset(99);  // beyond the log end: clamped when read back
      return std::nullopt;
    });
    clock.advance_ms(5000);
    ASSERT_TRUE(m->tick(clock.monotonic_ms()).ok());
    auto cp = read_offset_checkpoint(test::files(), tmp.path() / kReplicationOffsetCheckpointFile);
    ASSERT_TRUE(cp.ok());
    EXPECT_EQ(cp->at(a), Offset(3));
    ASSERT_TRUE(m->close().ok());
  }
  auto m = LogManager::open(test::files(), mc, cfg, clock).value();
  EXPECT_EQ(m->checkpointed_high_watermark(a), Offset(3));
  EXPECT_EQ(m->checkpointed_high_watermark(b), Offset(5));
}

}  // namespace
}  // namespace samsa

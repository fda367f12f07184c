#include "storage/checkpoint_file.h"

#include <gtest/gtest.h>

#include <fstream>

#include "storage/test_batches.h"

namespace samsa {
namespace {

TEST(CheckpointFileTest, RoundTrip) {
  test::TempDir dir;
  OffsetCheckpoint cp;
  cp[TopicPartition{"orders", PartitionId(0)}] = Offset(42);
  cp[TopicPartition{"my-topic.v2", PartitionId(17)}] = Offset(1LL << 40);
  cp[TopicPartition{"__consumer_offsets", PartitionId(3)}] = Offset(0);
  auto file = dir.path() / kRecoveryPointCheckpointFile;
  ASSERT_TRUE(write_offset_checkpoint(test::files(), file, cp).ok());
  EXPECT_FALSE(std::filesystem::exists(file.string() + ".tmp"));
  auto back = read_offset_checkpoint(test::files(), file);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, cp);
}

TEST(CheckpointFileTest, KafkaTextFormat) {
  OffsetCheckpoint cp;
  cp[TopicPartition{"a", PartitionId(1)}] = Offset(5);
  cp[TopicPartition{"b", PartitionId(0)}] = Offset(7);
  EXPECT_EQ(format_offset_checkpoint(cp), "0\n2\na 1 5\nb 0 7\n");
  auto parsed = parse_offset_checkpoint("0\n2\na 1 5\nb 0 7\n");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, cp);
  EXPECT_EQ(format_offset_checkpoint({}), "0\n0\n");
  EXPECT_TRUE(parse_offset_checkpoint("0\n0\n").ok());
}

TEST(CheckpointFileTest, MissingFileIsEmpty) {
  test::TempDir dir;
  auto cp = read_offset_checkpoint(test::files(), dir.path() / "nope");
  ASSERT_TRUE(cp.ok());
  EXPECT_TRUE(cp->empty());
}

TEST(CheckpointFileTest, GarbageIsCorrupt) {
  for (const char* text : {"", "0", "1\n0\n", "0\n2\na 1 5\n", "0\n1\na 1\n", "0\n1\na x 5\n", "0\n1\na 1 -5\n",
                           "0\n1\n 1 5\n", "0\n1\na 1 5 6\n", "0\n-1\n", "\x01\x02\x03garbage", "0\n1\na -1 5\n",
                           "0\n1\na 1 99999999999999999999999\n"}) {
    auto cp = parse_offset_checkpoint(text);
    ASSERT_FALSE(cp.ok()) << text;
    EXPECT_EQ(cp.error().kind(), ErrorKind::kCorrupt) << text;
  }
  test::TempDir dir;
  auto file = dir.path() / "cp";
  {
    std::ofstream f(file);
    f << "0\n3\nonly one line\n";
  }
  auto cp = read_offset_checkpoint(test::files(), file);
  ASSERT_FALSE(cp.ok());
  EXPECT_EQ(cp.error().kind(), ErrorKind::kCorrupt);
}

}  // namespace
}  // namespace samsa

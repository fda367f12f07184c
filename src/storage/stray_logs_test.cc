// Issue 10 item 4: partition directories are matched by topic id
// (partition.metadata), and a directory the metadata does not assign here by
// that id is never served: deleted when its topic id is known (a deletion a
// crash interrupted), quarantined as `-stray` when it has data but no id.

#include <gtest/gtest.h>

#include <fstream>

#include "storage/log_manager.h"
#include "storage/partition_metadata.h"
#include "storage/test_batches.h"

namespace samsa {
namespace {

namespace fs = std::filesystem;
using test::BatchSpec;
using test::make_batch;

const TopicPartition kTp{"orders", PartitionId(6)};

Uuid id(uint8_t n) {
  Uuid u;
  u.bytes[0] = n;
  u.bytes[15] = 0x5a;
  return u;
}

struct Fixture {
  test::TempDir tmp;
  ManualClock clock{1'000'000};
  LogManagerConfig config;
  LogConfig log_config;

  Fixture() {
    config.log_dirs = {tmp.path() / "d1"};
    log_config.segment_bytes = 4096;
    log_config.index_interval_bytes = 256;
  }
  fs::path dir() const { return config.log_dirs[0]; }
  std::unique_ptr<LogManager> open() {
    auto m = LogManager::open(test::files(), config, log_config, clock);
    EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().to_string());
    return m.ok() ? std::move(m).value() : nullptr;
  }
  // A log of kTp under topic id `topic`, with `batches` batches of 3
  // records, left as after kill -9 (no close).
  void write_crashed_log(const Uuid& topic, int batches) {
    auto m = open();
    Log* log = m->create_log(kTp, log_config, topic).value();
    for (int i = 0; i < batches; ++i) {
      Bytes b = make_batch(BatchSpec{Offset(0), 3, 1000 + i, 1, 50});
      ASSERT_TRUE(log->append(b.data(), b.size(), LeaderEpoch(1)).ok());
    }
    ASSERT_TRUE(m->write_recovery_point_checkpoints().ok());
  }
};

bool has_entry_ending(const fs::path& dir, std::string_view suffix) {
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().ends_with(suffix)) return true;
  }
  return false;
}

TEST(PartitionMetadataTest, KafkasFormatRoundTrips) {
  test::TempDir tmp;
  ASSERT_TRUE(write_partition_metadata(test::files(), tmp.path(), id(7)).ok());
  std::ifstream in(tmp.path() / kPartitionMetadataFile);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "version: 0\ntopic_id: " + id(7).to_string() + "\n");
  auto back = read_partition_metadata(test::files(), tmp.path());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, id(7));
}

TEST(PartitionMetadataTest, MissingIsNoneAndMalformedIsCorrupt) {
  test::TempDir tmp;
  auto none = read_partition_metadata(test::files(), tmp.path());
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  for (const std::string& bad : std::vector<std::string>{"", "version: 1\ntopic_id: " + id(1).to_string() + "\n", "version: 0\n",
                          "version: 0\ntopic_id: not-a-uuid\n", "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n",
                          "version: 0\ntopic_id: " + id(1).to_string() + "\ngarbage\n"}) {
    std::ofstream(tmp.path() / kPartitionMetadataFile, std::ios::trunc) << bad;
    auto r = read_partition_metadata(test::files(), tmp.path());
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().kind(), ErrorKind::kCorrupt) << bad;
  }
}

TEST(StrayLogsTest, CreateWritesTheTopicIdAndReopenReadsIt) {
  Fixture f;
  f.write_crashed_log(id(1), 2);
  auto m = f.open();
  Log* log = m->get(kTp);
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(log->topic_id(), id(1));
  EXPECT_EQ(m->create_log(kTp, f.log_config, id(1)).value(), log);
}

// The crash of the issue: the topic was deleted from the metadata, the
// broker died before removing the partition dir, and the topic is re-created
// under the same name (new topic id).
TEST(StrayLogsTest, DirOfAForeignTopicIdIsDeletedAndNeverServed) {
  Fixture f;
  f.write_crashed_log(id(1), 20);
  auto m = f.open();
  ASSERT_NE(m->get(kTp), nullptr);  // loaded, not yet judged
  // Without the stray pass first, creating the new topic's log is refused.
  auto refused = m->create_log(kTp, f.log_config, id(2));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind(), ErrorKind::kAlreadyExists);
  ASSERT_TRUE(m->remove_stray_logs({{kTp, id(2)}}).ok());
  EXPECT_EQ(m->get(kTp), nullptr);
  EXPECT_FALSE(fs::exists(f.dir() / kTp.to_string()));
  EXPECT_FALSE(has_entry_ending(f.dir(), "-delete"));
  // The checkpoints no longer name it.
  auto points = read_offset_checkpoint(test::files(), f.dir() / kRecoveryPointCheckpointFile);
  ASSERT_TRUE(points.ok());
  EXPECT_FALSE(points->contains(kTp));
  Log* fresh = m->create_log(kTp, f.log_config, id(2)).value();
  EXPECT_EQ(fresh->log_end_offset(), Offset(0));
  EXPECT_EQ(fresh->size_bytes(), 0);
  EXPECT_EQ(fresh->topic_id(), id(2));
  EXPECT_EQ(*read_partition_metadata(test::files(), fresh->dir()), id(2));
}

TEST(StrayLogsTest, DirOfADeletedTopicIsDeletedAtTheFirstStrayPass) {
  Fixture f;
  f.write_crashed_log(id(1), 5);
  auto m = f.open();
  ASSERT_TRUE(m->remove_stray_logs({}).ok());
  EXPECT_TRUE(m->all().empty());
  EXPECT_FALSE(fs::exists(f.dir() / kTp.to_string()));
  auto reopened = f.open();
  EXPECT_TRUE(reopened->all().empty());
}

TEST(StrayLogsTest, AssignedLogOfTheSameTopicIdIsKept) {
  Fixture f;
  f.write_crashed_log(id(1), 5);
  auto m = f.open();
  ASSERT_TRUE(m->remove_stray_logs({{kTp, id(1)}}).ok());
  ASSERT_NE(m->get(kTp), nullptr);
  EXPECT_EQ(m->get(kTp)->log_end_offset(), Offset(15));
}

// Directories without partition.metadata (written before it existed).
void drop_partition_metadata(Fixture& f) { fs::remove(f.dir() / kTp.to_string() / kPartitionMetadataFile); }

TEST(StrayLogsTest, UnassignedDirWithDataButNoTopicIdIsQuarantined) {
  Fixture f;
  f.write_crashed_log(id(1), 5);
  drop_partition_metadata(f);
  {
    auto m = f.open();
    EXPECT_FALSE(m->get(kTp)->topic_id().has_value());
    ASSERT_TRUE(m->remove_stray_logs({}).ok());
    EXPECT_EQ(m->get(kTp), nullptr);
    EXPECT_FALSE(fs::exists(f.dir() / kTp.to_string()));
    EXPECT_TRUE(has_entry_ending(f.dir(), "-stray"));
    ASSERT_TRUE(m->close().ok());
  }
  auto m = f.open();  // kept on disk, never loaded again
  EXPECT_TRUE(m->all().empty());
  EXPECT_TRUE(has_entry_ending(f.dir(), "-stray"));
  Log* fresh = m->create_log(kTp, f.log_config, id(2)).value();
  EXPECT_EQ(fresh->size_bytes(), 0);
}

TEST(StrayLogsTest, UnassignedEmptyDirWithoutTopicIdIsDeleted) {
  Fixture f;
  f.write_crashed_log(id(1), 0);
  drop_partition_metadata(f);
  auto m = f.open();
  ASSERT_TRUE(m->remove_stray_logs({}).ok());
  EXPECT_TRUE(m->all().empty());
  EXPECT_FALSE(has_entry_ending(f.dir(), "-stray"));
  EXPECT_FALSE(fs::exists(f.dir() / kTp.to_string()));
}

TEST(StrayLogsTest, AssignedDirWithoutTopicIdIsAdopted) {
  Fixture f;
  f.write_crashed_log(id(1), 5);
  drop_partition_metadata(f);
  auto m = f.open();
  ASSERT_TRUE(m->remove_stray_logs({{kTp, id(3)}}).ok());
  Log* log = m->create_log(kTp, f.log_config, id(3)).value();
  EXPECT_EQ(log->log_end_offset(), Offset(15));
  EXPECT_EQ(*read_partition_metadata(test::files(), log->dir()), id(3));
}

// A dir still on disk that no log holds (a deletion whose rename failed).
TEST(StrayLogsTest, DirInTheWayOfACreateIsDeletedOnlyIfItNamesAnotherTopicId) {
  Fixture f;
  auto m = f.open();
  fs::path path = f.dir() / kTp.to_string();
  fs::create_directories(path);
  std::ofstream(path / "00000000000000000000.log");  // empty, no id: a create cut short (ENOSPC)
  Log* created = m->create_log(kTp, f.log_config, id(2)).value();
  EXPECT_EQ(created->topic_id(), id(2));
  ASSERT_TRUE(m->remove_stray_logs({}).ok());
  fs::create_directories(path);
  std::ofstream(path / "00000000000000000000.log") << "old data";
  auto refused = m->create_log(kTp, f.log_config, id(2));  // no id: unknown, not ours to delete
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind(), ErrorKind::kAlreadyExists);
  EXPECT_TRUE(fs::exists(path / "00000000000000000000.log"));
  ASSERT_TRUE(write_partition_metadata(test::files(), path, id(1)).ok());
  Log* fresh = m->create_log(kTp, f.log_config, id(2)).value();
  EXPECT_EQ(fresh->size_bytes(), 0);
  EXPECT_EQ(fresh->topic_id(), id(2));
}

TEST(StrayLogsTest, LeftoverDeleteDirHoldingAWholeLogIsRemovedAtStartup) {
  Fixture f;
  f.write_crashed_log(id(1), 5);
  Rng rng(7);
  fs::path doomed = renamed_partition_dir(f.dir() / kTp.to_string(), kDeleteDirSuffix, rng);
  fs::rename(f.dir() / kTp.to_string(), doomed);
  auto m = f.open();
  EXPECT_FALSE(fs::exists(doomed));
  EXPECT_TRUE(m->all().empty());
}

}  // namespace
}  // namespace samsa

#include "controller/local_metadata_log.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "controller/topic_planner.h"
#include "io/posix_file_system.h"

namespace samsa {
namespace {

std::filesystem::path temp_dir() {
  auto dir = std::filesystem::temp_directory_path() / ("samsa-meta-" + std::to_string(::getpid()) + "-" +
                                                       std::to_string(std::rand()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Proposes and expects the inline commit.
Offset commit(LocalMetadataLog& log, std::vector<MetadataRecord> records) {
  std::optional<Result<Offset>> outcome;
  log.propose(7, std::move(records), [&](Result<Offset> r) { outcome = std::move(r); });
  EXPECT_TRUE(outcome.has_value()) << "the single-node log commits before propose returns";
  EXPECT_TRUE(outcome && outcome->ok());
  return outcome && outcome->ok() ? **outcome : kNoOffset;
}

struct Recorder : MetadataListener {
  std::vector<std::pair<Offset, uint64_t>> batches;
  void on_committed(Offset offset, const std::vector<MetadataRecord>&, uint64_t tag) override {
    batches.emplace_back(offset, tag);
  }
};

TEST(LocalMetadataLog, CommittedRecordsSurviveReopen) {
  auto dir = temp_dir();
  PosixFileSystem files;
  ManualClock clock(1000);
  Uuid id;
  {
    auto store = LocalMetadataLog::open(files, dir, clock);
    ASSERT_TRUE(store.ok()) << store.error().to_string();
    Recorder recorder;
    (*store)->add_listener(&recorder);
    EXPECT_EQ(commit(**store, {RegisterBrokerRecord{NodeId(1), BrokerEpoch(0), {}, {{"PLAINTEXT", "127.0.0.1", 9092, 0}}, std::nullopt, false}}), Offset(0));
    Rng rng(5);
    auto plan = plan_create_topic((*store)->image(), NewTopic{"events", 3, 1, {}, {{"retention.ms", "5"}}}, {},
                                  PartitionLimits{}, rng);
    EXPECT_EQ(commit(**store, std::get<std::vector<MetadataRecord>>(plan)), Offset(5));
    // Published with the proposer's tag, after the image took it.
    EXPECT_EQ(recorder.batches, (std::vector<std::pair<Offset, uint64_t>>{{Offset(0), 7}, {Offset(5), 7}}));
    id = (*store)->image().topic("events")->id;
    ASSERT_TRUE((*store)->shutdown().ok());
  }
  auto reopened = LocalMetadataLog::open(files, dir, clock);
  ASSERT_TRUE(reopened.ok()) << reopened.error().to_string();
  const MetadataImage& image = (*reopened)->image();
  ASSERT_NE(image.topic("events"), nullptr);
  EXPECT_EQ(image.topic("events")->id, id);
  EXPECT_EQ(image.topic("events")->partitions.size(), 3u);
  EXPECT_EQ(image.topic("events")->configs.at("retention.ms"), "5");
  EXPECT_EQ(image.broker(NodeId(1))->port, 9092);
  EXPECT_EQ(image.applied_offset(), Offset(5));  // 1 broker + 1 topic + 3 partitions + 1 config
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace samsa

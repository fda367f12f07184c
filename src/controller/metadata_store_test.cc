#include "controller/metadata_store.h"

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

TEST(MetadataStore, CommittedRecordsSurviveReopen) {
  auto dir = temp_dir();
  PosixFileSystem files;
  ManualClock clock(1000);
  Uuid id;
  {
    auto store = MetadataStore::open(files, dir, clock);
    ASSERT_TRUE(store.ok()) << store.error().to_string();
    ASSERT_TRUE((*store)->commit({RegisterBrokerRecord{NodeId(1), BrokerEpoch(0), {}, {{"PLAINTEXT", "127.0.0.1", 9092, 0}}, std::nullopt, false}}).ok());
    Rng rng(5);
    auto plan = plan_create_topic((*store)->image(), NewTopic{"events", 3, 1, {}, {{"retention.ms", "5"}}}, {},
                                  PartitionLimits{}, rng);
    ASSERT_TRUE((*store)->commit(std::get<std::vector<MetadataRecord>>(plan)).ok());
    id = (*store)->image().topic("events")->id;
    ASSERT_TRUE((*store)->close().ok());
  }
  auto reopened = MetadataStore::open(files, dir, clock);
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

// The real Broker on a simulated host that crashes: what is left of it is
// destroyed after its runtime died (as broker_sim.cc does), which must be
// harmless whatever was in flight. Found by the broker simulation.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "base/log.h"
#include "broker/broker.h"
#include "storage/test_batches.h"
#include "testing/sim_runtime.h"
#include "testing/sim_world.h"

namespace samsa::sim {
namespace {

BrokerConfig one_broker_config() {
  std::map<std::string, std::string> p{{"node.id", "1"},
                                       {"log.dirs", "/data/logs"},
                                       {"metadata.log.dir", "/data/meta"},
                                       {"listeners", "PLAINTEXT://10.0.0.1:9092"},
                                       {"log.index.size.max.bytes", "8192"}};
  auto config = BrokerConfig::from_properties(p);
  EXPECT_TRUE(config.ok());
  return std::move(config).value();
}

// Seed 43: a segment rolled, its fsync was on the (slow) disk when the power
// went; the dead runtime never reports it, and ~Broker asserted that every
// flush had reported before putting the logs back on the inline executor.
TEST(BrokerCrash, AFlushStillOnTheDiskWhenThePowerGoesIsForgotten) {
  set_log_level(LogLevel::kOff);
  SimWorld world(43);
  HostId host = world.add_host();
  BrokerConfig config = one_broker_config();
  auto broker = std::make_unique<Broker>();
  Status started = broker->start(world.runtime(host), config);
  ASSERT_TRUE(started.ok()) << started.error().to_string();
  NewTopic topic;
  topic.name = "t";
  topic.num_partitions = 1;
  topic.replication_factor = 1;
  std::optional<ControllerError> failed;
  bool answered = false;
  broker->create_topic(topic, false, 0, [&](std::optional<ControllerError> outcome) {
    answered = true;
    failed = std::move(outcome);
  });
  ASSERT_TRUE(answered && !failed);
  Log* log = broker->replicas().logs().get(TopicPartition{"t", PartitionId(0)});
  ASSERT_NE(log, nullptr);
  Bytes batch = test::make_batch(test::BatchSpec{});
  ASSERT_TRUE(log->append(batch.data(), batch.size(), LeaderEpoch(0)).ok());
  world.volume(host).set_latency_us(1'000'000, 1'000'000);
  ASSERT_TRUE(log->roll().ok());  // its fsync is submitted, not run yet
  world.crash(host, CrashKind::kPowerLoss);
  broker.reset();
  set_log_level(LogLevel::kInfo);
}

}  // namespace
}  // namespace samsa::sim

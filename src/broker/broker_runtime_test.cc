// The broker takes everything from its Runtime: here, its randomness. Two
// brokers on fresh data directories with the same seed make the same
// choices (the cluster id is the first), another seed makes others.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "broker/broker.h"
#include "base/test_files.h"
#include "io/posix_runtime.h"

namespace samsa {
namespace {

namespace fs = std::filesystem;

using samsa::testing::TempDir;

// The cluster id a fresh broker on `seed` generates.
std::string fresh_cluster_id(uint64_t seed) {
  TempDir dir;
  std::map<std::string, std::string> props{{"log.dirs", (dir.path() / "logs").string()},
                                           {"listeners", "PLAINTEXT://127.0.0.1:9092"}};
  auto config = BrokerConfig::from_properties(props);
  EXPECT_TRUE(config.ok());
  auto runtime = PosixRuntime::create(seed);
  EXPECT_TRUE(runtime.ok());
  Broker broker;
  Status started = broker.start(**runtime, *config);
  EXPECT_TRUE(started.ok()) << started.error().to_string();
  std::string id = broker.cluster_id();
  broker.shutdown();
  return id;
}

TEST(BrokerRuntime, RandomChoicesReplayFromTheRuntimeSeed) {
  std::string a = fresh_cluster_id(1234);
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(fresh_cluster_id(1234), a);
  EXPECT_NE(fresh_cluster_id(5678), a);
}

}  // namespace
}  // namespace samsa

// meta.properties: `samsa storage format` (kafka-storage.sh format) and the
// startup checks, with Kafka's messages.

#include "broker/meta_properties.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "config/properties.h"

namespace samsa {
namespace {

namespace fs = std::filesystem;

class MetaPropertiesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "samsa-meta-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // A combined node of its own static quorum (must be formatted).
  BrokerConfig config(std::map<std::string, std::string> props = {}) const {
    props.emplace("log.dirs", path("a") + "," + path("b"));
    props.emplace("metadata.log.dir", path("meta"));
    props.emplace("listeners", "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093");
    props.emplace("controller.listener.names", "CONTROLLER");
    props.emplace("controller.quorum.voters", props.count("node.id") ? props["node.id"] + "@127.0.0.1:9093"
                                                                      : "1@127.0.0.1:9093");
    auto c = BrokerConfig::from_properties(props);
    EXPECT_TRUE(c.ok()) << c.error().message();
    return c.ok() ? std::move(c).value() : BrokerConfig{};
  }

  std::string read(const std::string& dir, const std::string& key) const {
    auto props = load_properties_file(path(dir) + "/meta.properties");
    EXPECT_TRUE(props.ok());
    return props.ok() && props->count(key) ? props->at(key) : "";
  }

  fs::path dir_;
  Rng rng_{7};
};

const std::string kCluster = "MkU3OEVBNTcwNTJENDM2Qg";

std::string error_of(const Result<std::vector<std::string>>& r) { return r.ok() ? "" : r.error().message(); }
std::string error_of(const Result<std::string>& r) { return r.ok() ? "" : r.error().message(); }

TEST_F(MetaPropertiesTest, FormatWritesEveryDirOnceAndRefusesToFormatAgain) {
  BrokerConfig c = config();
  auto lines = format_storage(c, FormatOptions{kCluster}, rng_);
  ASSERT_TRUE(lines.ok()) << lines.error().message();
  EXPECT_EQ(*lines, (std::vector<std::string>{"Formatting data directory " + path("a"),
                                              "Formatting data directory " + path("b"),
                                              "Formatting metadata directory " + path("meta")}));
  for (const char* dir : {"a", "b", "meta"}) {
    EXPECT_EQ(read(dir, "cluster.id"), kCluster);
    EXPECT_EQ(read(dir, "node.id"), "1");
    EXPECT_EQ(read(dir, "version"), "1");
    EXPECT_EQ(read(dir, "directory.id").size(), 22u);
  }
  EXPECT_NE(read("a", "directory.id"), read("b", "directory.id"));
  EXPECT_EQ(error_of(format_storage(c, FormatOptions{kCluster}, rng_)),
            "Log directory " + path("a") + " is already formatted. Use --ignore-formatted to ignore this directory "
            "and format the others.");
  auto again = format_storage(c, FormatOptions{kCluster, true}, rng_);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, std::vector<std::string>{"All of the log directories are already formatted."});
  fs::remove(path("b") + "/meta.properties");
  again = format_storage(c, FormatOptions{kCluster, true}, rng_);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, std::vector<std::string>{"Formatting data directory " + path("b")});
  auto started = ensure_meta_properties(c, rng_);
  ASSERT_TRUE(started.ok()) << started.error().message();
  EXPECT_EQ(*started, kCluster);
}

TEST_F(MetaPropertiesTest, FormatRefusesWhatKafkaRefuses) {
  EXPECT_NE(error_of(format_storage(config(), FormatOptions{"invalid"}, rng_))
                .find("Cluster ID string invalid does not appear to be a valid UUID"),
            std::string::npos);
  EXPECT_NE(error_of(format_storage(config({{"cluster.id", "other"}}), FormatOptions{kCluster}, rng_))
                .find("differs from cluster.id other"),
            std::string::npos);
  auto broker = BrokerConfig::from_properties({{"process.roles", "broker"},
                                               {"node.id", "2"},
                                               {"log.dirs", path("x")},
                                               {"controller.quorum.voters", "1@127.0.0.1:9093"},
                                               {"controller.listener.names", "CONTROLLER"}});
  ASSERT_TRUE(broker.ok()) << broker.error().message();
  EXPECT_EQ(error_of(format_storage(*broker, FormatOptions{kCluster, false, true}, rng_)),
            "You can only use --standalone on a controller.");
  EXPECT_TRUE(format_storage(*broker, FormatOptions{kCluster}, rng_).ok());
  auto dynamic = BrokerConfig::from_properties({{"log.dirs", path("y")},
                                                {"listeners", "PLAINTEXT://127.0.0.1:9092,CONTROLLER://0.0.0.0:9093"},
                                                {"controller.listener.names", "CONTROLLER"},
                                                {"controller.quorum.bootstrap.servers", "127.0.0.1:9093"}});
  ASSERT_TRUE(dynamic.ok()) << dynamic.error().message();
  EXPECT_NE(error_of(format_storage(*dynamic, FormatOptions{kCluster}, rng_))
                .find("Because controller.quorum.voters is not set on this controller, you must specify one of the "
                      "following: --standalone, --initial-controllers, or --no-initial-controllers."),
            std::string::npos);
  auto standalone = format_storage(*dynamic, FormatOptions{kCluster, false, true}, rng_);
  ASSERT_TRUE(standalone.ok()) << standalone.error().message();
  EXPECT_EQ(standalone->front(), "Initial voter (--standalone): 1@localhost:9093");
  // The implicit single node (no quorum keys, no controller listener) needs no --standalone.
  auto implicit = BrokerConfig::from_properties({{"log.dirs", path("z")}});
  ASSERT_TRUE(implicit.ok());
  EXPECT_TRUE(format_storage(*implicit, FormatOptions{kCluster}, rng_).ok());
  EXPECT_EQ(error_of(format_storage(*implicit, FormatOptions{kCluster, false, true}, rng_)),
            "No controller listeners found.");
}

TEST_F(MetaPropertiesTest, StartupRefusesAnotherNodesOrClustersDirs) {
  ASSERT_TRUE(format_storage(config(), FormatOptions{kCluster}, rng_).ok());
  EXPECT_EQ(error_of(ensure_meta_properties(config({{"node.id", "2"}}), rng_)),
            "Stored node id 1 doesn't match previous node id 2 in " + path("a") +
                "/meta.properties. If you moved your data, make sure your configured node id matches. If you intend "
                "to create a new node, you should remove all data in your data directories.");
  std::string why = error_of(ensure_meta_properties(config({{"cluster.id", "OtherClusterIdOtherCl"}}), rng_));
  EXPECT_NE(why.find("Invalid cluster.id in: " + path("a") + "/meta.properties. Expected OtherClusterIdOtherCl, but "
                     "read " + kCluster + ". This directory belongs to another cluster"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("samsa storage format --cluster-id OtherClusterIdOtherCl --config FILE"), std::string::npos);
  // One dir formatted for another cluster, among this node's.
  BrokerConfig extra = config({{"log.dirs", path("a") + "," + path("b") + "," + path("c")}});
  Rng other(9);
  ASSERT_TRUE(format_storage(BrokerConfig::from_properties({{"log.dirs", path("c")}}).value(),
                             FormatOptions{"AAAAAAAAAAAAAAAAAAAAAQ"}, other)
                  .ok());
  why = error_of(ensure_meta_properties(extra, rng_));
  EXPECT_NE(why.find("Invalid cluster.id in: " + path("c") + "/meta.properties. Expected " + kCluster +
                     ", but read AAAAAAAAAAAAAAAAAAAAAQ"),
            std::string::npos)
      << why;
}

TEST_F(MetaPropertiesTest, OnlyTheImplicitSingleNodeFormatsItself) {
  std::string why = error_of(ensure_meta_properties(config(), rng_));
  EXPECT_NE(why.find("No `meta.properties` found in " + path("meta") +
                     " (have you run `samsa storage format` to format the directory?)"),
            std::string::npos)
      << why;
  EXPECT_FALSE(fs::exists(path("a") + "/meta.properties")) << "refused, yet wrote";
  auto implicit = BrokerConfig::from_properties({{"log.dirs", path("a") + "," + path("b")}});
  ASSERT_TRUE(implicit.ok());
  auto id = ensure_meta_properties(*implicit, rng_);
  ASSERT_TRUE(id.ok()) << id.error().message();
  EXPECT_EQ(read("a", "cluster.id"), *id);
  EXPECT_EQ(read("b", "cluster.id"), *id);
  // Formatted once: a new empty dir of the same node joins with the node's id.
  auto grown = BrokerConfig::from_properties({{"log.dirs", path("a") + "," + path("b") + "," + path("d")}});
  auto again = ensure_meta_properties(*grown, rng_);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *id);
  EXPECT_EQ(read("d", "cluster.id"), *id);
}

}  // namespace
}  // namespace samsa

// The command line of `samsa server` and loading a BrokerConfig from it
// (the config's own rules are tested in config/broker_config_test.cc).
#include "server/server_args.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace samsa {
namespace {

TEST(ServerArgs, ParsesConfigAndOverrides) {
  const char* argv[] = {"server", "--config", "x.properties", "--override", "num.partitions=3",
                        "--override=log.dirs=/tmp/a,/tmp/b"};
  auto a = parse_server_args(6, argv);
  ASSERT_TRUE(a.ok()) << a.error().to_string();
  EXPECT_EQ(a->config_path, "x.properties");
  ASSERT_EQ(a->overrides.size(), 2u);
  EXPECT_EQ(a->overrides[0], (std::pair<std::string, std::string>{"num.partitions", "3"}));
  EXPECT_EQ(a->overrides[1], (std::pair<std::string, std::string>{"log.dirs", "/tmp/a,/tmp/b"}));

  const char* positional[] = {"server", "config/server.properties"};
  auto p = parse_server_args(2, positional);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->config_path, "config/server.properties");

  const char* bad1[] = {"server", "--override", "novalue"};
  EXPECT_FALSE(parse_server_args(3, bad1).ok());
  const char* bad2[] = {"server", "--frobnicate"};
  EXPECT_FALSE(parse_server_args(2, bad2).ok());
  const char* bad3[] = {"server", "--config"};
  EXPECT_FALSE(parse_server_args(2, bad3).ok());
}

TEST(ServerArgs, OverridesWinOverFileAndUnknownKeysWarn) {
  ServerArgs args;
  args.config_path = "config/server.properties";
  args.overrides = {{"num.partitions", "4"}, {"no.such.key", "1"}};
  testing::internal::CaptureStderr();
  auto c = load_broker_config(args);
  std::string log = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  EXPECT_EQ(c->num_partitions, 4);
  EXPECT_NE(log.find("The configuration 'no.such.key' was supplied but isn't a known config."), std::string::npos)
      << log;
}

}  // namespace
}  // namespace samsa

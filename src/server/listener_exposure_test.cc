#include "server/listener_exposure.h"

#include <gtest/gtest.h>

namespace samsa {
namespace {

ListenerConfig listener(std::string host, std::string protocol = "PLAINTEXT") {
  return ListenerConfig{Endpoint{"PLAINTEXT", std::move(host), 9092}, std::move(protocol)};
}

TEST(ListenerExposure, LoopbackHosts) {
  for (const char* host : {"127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1", "localhost", "LocalHost"}) {
    EXPECT_TRUE(is_loopback_host(host)) << host;
  }
  for (const char* host : {"", "0.0.0.0", "::", "10.0.0.5", "192.168.1.1", "128.0.0.1", "::ffff:10.0.0.1", "fe80::1",
                           "broker1.example.com", "localhost.example.com"}) {
    EXPECT_FALSE(is_loopback_host(host)) << host;
  }
}

// Issue 10 item 11: a plaintext listener beyond loopback gets a warning.
TEST(ListenerExposure, WarnsForPlaintextBeyondLoopback) {
  EXPECT_FALSE(exposure_warning(listener("127.0.0.1")));
  EXPECT_FALSE(exposure_warning(listener("::1")));
  auto all = exposure_warning(listener(""));
  ASSERT_TRUE(all);
  EXPECT_NE(all->find("all interfaces"), std::string::npos) << *all;
  EXPECT_NE(all->find("no authentication"), std::string::npos) << *all;
  auto any = exposure_warning(listener("0.0.0.0"));
  ASSERT_TRUE(any);
  EXPECT_NE(any->find("PLAINTEXT://0.0.0.0:9092"), std::string::npos) << *any;
  EXPECT_TRUE(exposure_warning(listener("10.0.0.5")));
  EXPECT_TRUE(exposure_warning(listener("broker1.example.com")));
}

}  // namespace
}  // namespace samsa

#include "cli/wire_client.h"

#include <gtest/gtest.h>

namespace samsa::cli {
namespace {

TEST(HostPort, ParsesKafkaBootstrapLists) {
  auto list = parse_host_port_list("127.0.0.1:9092, broker-2:9094,[::1]:9096");
  ASSERT_TRUE(list.ok()) << list.error().message();
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[0].to_string(), "127.0.0.1:9092");
  EXPECT_EQ((*list)[1].host, "broker-2");
  EXPECT_EQ((*list)[2].host, "::1");
  EXPECT_EQ((*list)[2].port, 9096);
}

TEST(HostPort, RefusesWhatIsNotHostColonPort) {
  for (const char* bad : {"", ",", "localhost", "localhost:", ":9092", "h:0", "h:65536", "h:90x2"}) {
    EXPECT_FALSE(parse_host_port_list(bad).ok()) << "'" << bad << "'";
  }
}

TEST(WireClient, ConnectingToAClosedPortFailsNamingIt) {
  // Port 1 on loopback: nobody listens there in a test environment.
  auto client = WireClient::connect(HostPort{"127.0.0.1", 1}, 2000);
  ASSERT_FALSE(client.ok());
  EXPECT_NE(client.error().message().find("cannot connect to 127.0.0.1:1"), std::string::npos)
      << client.error().message();
}

}  // namespace
}  // namespace samsa::cli

#include "cli/cluster_description.h"

#include <gtest/gtest.h>

#include "cli/json_writer.h"

namespace samsa::cli {
namespace {

QuorumStatus three_voters() {
  QuorumStatus q;
  q.leader_id = 2;
  q.leader_epoch = 7;
  q.high_watermark = 61;
  q.voters = {{1, "AAAAAAAAAAAAAAAAAAAAAA", 61, 1000, 1000},
              {2, "AAAAAAAAAAAAAAAAAAAAAA", 61, 1100, 1100},
              {3, "AAAAAAAAAAAAAAAAAAAAAA", 55, 900, 800}};
  q.observers = {{4, "AAAAAAAAAAAAAAAAAAAAAA", 60, 1050, 1000}};
  q.endpoints[1] = {"CONTROLLER://h1:9093"};
  q.endpoints[2] = {"CONTROLLER://h2:9093"};
  return q;
}

TEST(QuorumFigures, AsKafkaComputesThem) {
  QuorumStatus q = three_voters();
  EXPECT_EQ(max_follower_lag(q), 6);
  EXPECT_EQ(max_follower_lag_time_ms(q), 1100 - 800);
  q.voters[2].last_caught_up_timestamp = -1;
  EXPECT_EQ(max_follower_lag_time_ms(q), -1);
  // All caught up: the first voter with the smallest end offset is voter 1,
  // not the leader, so the figure is the leader's time minus voter 1's.
  q.voters[2].log_end_offset = 61;
  EXPECT_EQ(max_follower_lag(q), 0);
  EXPECT_EQ(max_follower_lag_time_ms(q), 100);
  q.leader_id = 1;
  EXPECT_EQ(max_follower_lag_time_ms(q), 0);
}

TEST(QuorumStatusLines, MatchKafkaMetadataQuorumDescribeStatus) {
  EXPECT_EQ(format_quorum_status(three_voters(), std::string("MkU3OEVBNTcwNTJENDM2Qg")),
            "ClusterId:              MkU3OEVBNTcwNTJENDM2Qg\n"
            "LeaderId:               2\n"
            "LeaderEpoch:            7\n"
            "HighWatermark:          61\n"
            "MaxFollowerLag:         6\n"
            "MaxFollowerLagTimeMs:   300\n"
            "CurrentVoters:          [{\"id\": 1, \"endpoints\": [\"CONTROLLER://h1:9093\"]}, "
            "{\"id\": 2, \"endpoints\": [\"CONTROLLER://h2:9093\"]}, {\"id\": 3}]\n"
            "CurrentObservers:       [{\"id\": 4}]\n");
}

TEST(QuorumReplicationTable, LeaderFirstThenFollowersThenObservers) {
  std::string table = format_quorum_replication(three_voters());
  EXPECT_EQ(table,
            "NodeId\tDirectoryId           \tLogEndOffset\tLag\tLastFetchTimestamp\tLastCaughtUpTimestamp\tStatus  \t\n"
            "2     \tAAAAAAAAAAAAAAAAAAAAAA\t61          \t0  \t1100              \t1100                 \tLeader  \t\n"
            "1     \tAAAAAAAAAAAAAAAAAAAAAA\t61          \t0  \t1000              \t1000                 \tFollower\t\n"
            "3     \tAAAAAAAAAAAAAAAAAAAAAA\t55          \t6  \t900               \t800                  \tFollower\t\n"
            "4     \tAAAAAAAAAAAAAAAAAAAAAA\t60          \t1  \t1050              \t1000                 \tObserver\t\n");
}

ClusterMetadata two_brokers_one_gone() {
  ClusterMetadata m;
  m.cluster_id = "C";
  m.controller_id = 1;
  m.brokers = {{1, "h1", 9092, "rack-a"}, {2, "h2", 9092, std::nullopt}};
  TopicDescription t;
  t.name = "t";
  t.partitions = {{0, 1, {1, 2}, {1, 2}, {}}, {1, 2, {2, 3}, {2}, {3}}, {2, -1, {3}, {}, {3}}};
  m.topics.push_back(t);
  return m;
}

TEST(ClusterDescription, CountsAndFencedBrokers) {
  ClusterDescription c = describe_cluster(two_brokers_one_gone(), std::nullopt, "no quorum here");
  EXPECT_EQ(c.partitions, 3);
  EXPECT_EQ(c.under_replicated_partitions, 2);
  EXPECT_EQ(c.offline_partitions, 1);
  ASSERT_EQ(c.brokers.size(), 3u);
  EXPECT_FALSE(c.brokers[0].fenced);
  EXPECT_FALSE(c.brokers[1].fenced);
  EXPECT_TRUE(c.brokers[2].fenced);  // named by replicas, not listed live
  EXPECT_FALSE(c.brokers[2].host.has_value());
  EXPECT_EQ(active_controller(c), 1);  // Metadata's, without a quorum
}

TEST(ClusterDescription, ObserversNotListedLiveAreFenced) {
  ClusterDescription c = describe_cluster(two_brokers_one_gone(), three_voters(), "");
  EXPECT_EQ(active_controller(c), 2);  // the quorum leader
  ASSERT_EQ(c.brokers.size(), 4u);
  EXPECT_EQ(c.brokers[3].id, 4);
  EXPECT_TRUE(c.brokers[3].fenced);
}

TEST(ClusterDescription, JsonHasEveryField) {
  ClusterDescription c = describe_cluster(two_brokers_one_gone(), std::nullopt, "why \"not\"");
  std::string json = format_cluster_json(c);
  EXPECT_EQ(json,
            "{\"cluster_id\":\"C\",\"active_controller\":1,\"metadata_controller_id\":1,\"brokers\":["
            "{\"id\":1,\"host\":\"h1\",\"port\":9092,\"rack\":\"rack-a\",\"fenced\":false},"
            "{\"id\":2,\"host\":\"h2\",\"port\":9092,\"rack\":null,\"fenced\":false},"
            "{\"id\":3,\"host\":null,\"port\":null,\"rack\":null,\"fenced\":true}],"
            "\"partitions\":3,\"under_replicated_partitions\":2,\"offline_partitions\":1,"
            "\"quorum\":null,\"quorum_error\":\"why \\\"not\\\"\"}\n");
}

TEST(JsonEscape, ControlCharactersAndQuotes) {
  EXPECT_EQ(json_escape(std::string("a\"b\\c\n\x01", 7)), "a\\\"b\\\\c\\u000a\\u0001");
}

}  // namespace
}  // namespace samsa::cli

#include "cli/quorum_status.h"

#include <gtest/gtest.h>

#include "protocol/error_code.h"

namespace samsa::cli {
namespace {

using protocol::DescribeQuorumResponse;

DescribeQuorumResponse answer(int16_t partition_error) {
  DescribeQuorumResponse r;
  DescribeQuorumResponse::TopicResult t;
  t.topic_name = "__cluster_metadata";
  DescribeQuorumResponse::PartitionResult p;
  p.error_code = partition_error;
  p.leader_id = 3;
  p.leader_epoch = 9;
  p.high_watermark = 40;
  DescribeQuorumResponse::VoterState v;
  v.replica_id = 3;
  v.log_end_offset = 40;
  v.last_fetch_timestamp = 5;
  v.last_caught_up_timestamp = 6;
  p.current_voters.push_back(v);
  DescribeQuorumResponse::ObserverState o;
  o.replica_id = 7;
  o.log_end_offset = 38;
  p.observers.push_back(o);
  t.partitions.push_back(p);
  r.topics.push_back(t);
  DescribeQuorumResponse::Node n;
  n.node_id = 3;
  n.listeners.push_back({"CONTROLLER", "h3", 9093});
  r.nodes.push_back(n);
  return r;
}

TEST(QuorumAnswer, TheLeadersView) {
  auto a = to_quorum_answer(answer(0));
  ASSERT_TRUE(a.ok()) << a.error().message();
  EXPECT_FALSE(a->leader_elsewhere);
  EXPECT_EQ(a->status.leader_id, 3);
  EXPECT_EQ(a->status.leader_epoch, 9);
  EXPECT_EQ(a->status.high_watermark, 40);
  ASSERT_EQ(a->status.voters.size(), 1u);
  EXPECT_EQ(a->status.voters[0].last_caught_up_timestamp, 6);
  EXPECT_EQ(a->status.voters[0].directory_id, "AAAAAAAAAAAAAAAAAAAAAA");
  ASSERT_EQ(a->status.observers.size(), 1u);
  EXPECT_EQ(a->status.observers[0].last_fetch_timestamp, -1);  // not given: unknown
  EXPECT_EQ(a->status.endpoints.at(3), std::vector<std::string>{"CONTROLLER://h3:9093"});
}

TEST(QuorumAnswer, ANonLeaderNamesTheLeader) {
  auto a = to_quorum_answer(answer(int16_t(protocol::ErrorCode::kNotLeaderOrFollower)));
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->leader_elsewhere);
  EXPECT_EQ(a->leader_id, 3);
  EXPECT_EQ(a->status.endpoints.count(3), 1u);  // where to go next
}

TEST(QuorumAnswer, ErrorsAreSaid) {
  DescribeQuorumResponse top;
  top.error_code = int16_t(protocol::ErrorCode::kUnknownTopicOrPartition);
  top.error_message = "no such partition";
  auto a = to_quorum_answer(top);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().message(), "DescribeQuorum failed: UNKNOWN_TOPIC_OR_PARTITION: no such partition");
  EXPECT_FALSE(to_quorum_answer(DescribeQuorumResponse{}).ok());  // no __cluster_metadata-0
  EXPECT_FALSE(to_quorum_answer(answer(int16_t(protocol::ErrorCode::kClusterAuthorizationFailed))).ok());
}

}  // namespace
}  // namespace samsa::cli

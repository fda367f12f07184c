#include "controller/quorum_description.h"

#include "controller/raft_driver.h"
#include "controller/raft_wire.h"
#include "protocol/error_code.h"

namespace samsa {
namespace {

ReplicaDescription describe_member(const RaftDriver& driver, NodeId id, int64_t now_ms) {
  const raft::RaftNode& node = driver.node();
  ReplicaDescription r;
  r.id = id;
  if (id == node.id()) {  // the leader itself: its own log, caught up now
    r.log_end_offset = node.log().last_index().value();
    r.last_fetch_ms = now_ms;
    r.last_caught_up_ms = now_ms;
    return r;
  }
  auto progress = node.progress().find(id);
  if (progress != node.progress().end()) r.log_end_offset = progress->second.match().value();
  RaftDriver::PeerActivity activity = driver.activity(id);
  r.last_fetch_ms = activity.last_fetch_ms;
  r.last_caught_up_ms = activity.last_caught_up_ms;
  return r;
}

template <typename State>
State to_wire(const ReplicaDescription& r) {
  State s;
  s.replica_id = r.id.value();
  s.log_end_offset = r.log_end_offset;
  s.last_fetch_timestamp = r.last_fetch_ms;
  s.last_caught_up_timestamp = r.last_caught_up_ms;
  return s;
}

bool asks_for_metadata_partition(const protocol::DescribeQuorumRequest& request) {
  return request.topics.size() == 1 && request.topics[0].topic_name == kMetadataTopicName &&
         request.topics[0].partitions.size() == 1 && request.topics[0].partitions[0].partition_index == 0;
}

}  // namespace

QuorumDescription describe_raft_quorum(const RaftDriver& driver, int64_t now_ms) {
  const raft::RaftNode& node = driver.node();
  QuorumDescription q;
  q.is_leader = node.role() == raft::Role::kLeader;
  q.leader = node.leader();
  q.epoch = node.term().value();
  q.high_watermark = node.log().commit().value();
  if (!q.is_leader) return q;
  for (NodeId id : node.config().voters) q.voters.push_back(describe_member(driver, id, now_ms));
  for (NodeId id : node.config().observers) q.observers.push_back(describe_member(driver, id, now_ms));
  return q;
}

protocol::DescribeQuorumResponse answer_describe_quorum(const protocol::DescribeQuorumRequest& request,
                                                        const QuorumDescription& quorum) {
  protocol::DescribeQuorumResponse response;
  if (!asks_for_metadata_partition(request)) {
    response.error_code = int16_t(protocol::ErrorCode::kUnknownTopicOrPartition);
    response.error_message = "DescribeQuorum describes __cluster_metadata-0 only";
    return response;
  }
  protocol::DescribeQuorumResponse::TopicResult topic;
  topic.topic_name = std::string(kMetadataTopicName);
  protocol::DescribeQuorumResponse::PartitionResult p;
  p.partition_index = 0;
  p.leader_id = quorum.leader.value();
  p.leader_epoch = int32_t(quorum.epoch);
  if (!quorum.is_leader) {
    p.error_code = int16_t(protocol::ErrorCode::kNotLeaderOrFollower);
    p.error_message = "this node does not lead the metadata quorum";
  } else {
    p.high_watermark = quorum.high_watermark;
    for (const auto& r : quorum.voters) {
      p.current_voters.push_back(to_wire<protocol::DescribeQuorumResponse::VoterState>(r));
    }
    for (const auto& r : quorum.observers) {
      p.observers.push_back(to_wire<protocol::DescribeQuorumResponse::ObserverState>(r));
    }
  }
  topic.partitions.push_back(std::move(p));
  response.topics.push_back(std::move(topic));
  for (const QuorumEndpoint& e : quorum.nodes) {
    protocol::DescribeQuorumResponse::Node node;
    node.node_id = e.id.value();
    protocol::DescribeQuorumResponse::Listener listener;
    listener.name = e.listener;
    listener.host = e.host;
    listener.port = e.port;
    node.listeners.push_back(std::move(listener));
    response.nodes.push_back(std::move(node));
  }
  return response;
}

}  // namespace samsa

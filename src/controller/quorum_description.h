#pragma once
// QuorumDescription: the state of the metadata quorum as DescribeQuorum
// (API 55) reports it: leader, epoch, high watermark, and per voter and
// observer its log end offset and last fetch / caught-up times. Built from a
// RaftDriver (describe_raft_quorum) or, on today's single node without a
// raft driver, by its owner; QuorumView is what the listeners ask.
//
// Offsets are KRaft's: an exclusive end offset, which is our raft LogIndex
// (index = offset + 1), so the high watermark is the commit index and a
// follower's log end offset is its match index.

#include <cstdint>
#include <string>
#include <vector>

#include "model/ids.h"
#include "protocol/generated/describe_quorum.h"

namespace samsa {

class RaftDriver;

struct ReplicaDescription {
  NodeId id;
  int64_t log_end_offset = -1;     // -1 unknown
  int64_t last_fetch_ms = -1;      // wall clock; -1 unknown
  int64_t last_caught_up_ms = -1;  // wall clock; -1 unknown
};

struct QuorumEndpoint {
  NodeId id;
  std::string listener;  // the controller listener's name
  std::string host;
  uint16_t port = 0;
};

struct QuorumDescription {
  bool is_leader = false;  // only the leader answers DescribeQuorum (as in KRaft)
  NodeId leader = kNoNode;
  int64_t epoch = -1;
  int64_t high_watermark = -1;
  std::vector<ReplicaDescription> voters;
  std::vector<ReplicaDescription> observers;
  std::vector<QuorumEndpoint> nodes;  // the voters' controller listeners (v2 Nodes)
};

class QuorumView {
 public:
  virtual ~QuorumView() = default;
  virtual QuorumDescription describe_quorum() const = 0;
};

// From the raft node the driver runs: the leader's view of every member.
QuorumDescription describe_raft_quorum(const RaftDriver& driver, int64_t now_ms);

// The DescribeQuorum answer, as KafkaRaftClient gives it: a request for
// anything but __cluster_metadata-0 is UNKNOWN_TOPIC_OR_PARTITION (top
// level); a node that does not lead answers NOT_LEADER_OR_FOLLOWER in the
// partition, with the leader and epoch it knows.
protocol::DescribeQuorumResponse answer_describe_quorum(const protocol::DescribeQuorumRequest& request,
                                                        const QuorumDescription& quorum);

}  // namespace samsa

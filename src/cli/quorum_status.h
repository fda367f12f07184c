#pragma once
// QuorumStatus: the KRaft metadata quorum as DescribeQuorum (API 55) shows
// it, what kafka-metadata-quorum.sh's `describe --status` and
// `describe --replication` print, and how the tools reach it.
//
// Reaching the leader: only the quorum leader describes the quorum; another
// node answers NOT_LEADER_OR_FOLLOWER with the leader's id. Kafka's brokers
// forward DescribeQuorum to the active controller and Kafka's admin client
// with bootstrap.controllers (KIP-919, `--bootstrap-controller`) sends it to
// the active controller itself; Samsa's nodes answer it themselves when they
// are controllers (on the controller listener, and on the broker listener of
// a combined node) and a broker-only node does not serve it. So
// fetch_quorum_status asks the given listener and, when told of another
// leader, follows it: to the leader's controller listener named in the
// answer (v2 Nodes), else to the broker listener of that node id from the
// cluster's Metadata (a combined node). At most kMaxLeaderHops hops.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/result.h"
#include "cli/cluster_metadata.h"
#include "cli/wire_client.h"
#include "protocol/generated/describe_quorum.h"

namespace samsa::cli {

inline constexpr int kMaxLeaderHops = 3;

struct QuorumReplica {
  int32_t id = -1;
  std::string directory_id;          // Kafka's text form; all 'A's when unknown (v0-1)
  int64_t log_end_offset = -1;
  int64_t last_fetch_timestamp = -1;      // ms since the epoch; -1 unknown (v0)
  int64_t last_caught_up_timestamp = -1;  // ms since the epoch; -1 unknown (v0)
};

struct QuorumStatus {
  int32_t leader_id = -1;
  int32_t leader_epoch = -1;
  int64_t high_watermark = -1;
  std::vector<QuorumReplica> voters;
  std::vector<QuorumReplica> observers;
  // Node id -> its controller endpoints as "LISTENER://host:port" (v2 Nodes).
  std::map<int32_t, std::vector<std::string>> endpoints;
  std::string answered_by;  // host:port of the leader that answered
};

// One DescribeQuorum answer, decoded. `leader_elsewhere` is set (with
// `leader_id`) when the node answered NOT_LEADER_OR_FOLLOWER.
struct QuorumAnswer {
  bool leader_elsewhere = false;
  int32_t leader_id = -1;
  QuorumStatus status;
};

// Pure: the answer for __cluster_metadata-0, or the error it carries.
Result<QuorumAnswer> to_quorum_answer(const protocol::DescribeQuorumResponse& response);

// Kafka's derived figures (MetadataQuorumCommand).
// The leader's log end offset minus the smallest voter's.
int64_t max_follower_lag(const QuorumStatus& status);
// 0 when the leader is (the first) furthest behind, else the leader's last
// caught-up time minus that voter's; -1 when either is unknown.
int64_t max_follower_lag_time_ms(const QuorumStatus& status);
const QuorumReplica* quorum_leader(const QuorumStatus& status);

// Asks `first` (a broker or controller listener) and follows the leader.
// `metadata`, when given, maps a leader id to a broker listener.
Result<QuorumStatus> fetch_quorum_status(const std::vector<HostPort>& first, const ClusterMetadata* metadata,
                                         int timeout_ms);

}  // namespace samsa::cli

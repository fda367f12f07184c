#include "cli/quorum_status.h"

#include "protocol/error_code.h"

namespace samsa::cli {
namespace {

constexpr const char* kMetadataTopic = "__cluster_metadata";

template <typename State>
QuorumReplica to_replica(const State& s) {
  return {s.replica_id, s.replica_directory_id.to_string(), s.log_end_offset, s.last_fetch_timestamp,
          s.last_caught_up_timestamp};
}

std::string error_text(int16_t code, const std::optional<std::string>& message) {
  std::string out = protocol::error_name(code);
  if (message && !message->empty()) out += ": " + *message;
  return out;
}

// Where to ask next for `leader_id`: its controller listener, else the
// broker listener of a combined node with that id.
std::optional<HostPort> leader_address(const QuorumStatus& status, int32_t leader_id,
                                       const ClusterMetadata* metadata) {
  auto it = status.endpoints.find(leader_id);
  if (it != status.endpoints.end()) {
    for (const std::string& endpoint : it->second) {
      size_t scheme = endpoint.find("://");
      if (scheme == std::string::npos) continue;
      auto address = parse_host_port(endpoint.substr(scheme + 3));
      if (address.ok()) return *address;
    }
  }
  if (metadata != nullptr) {
    if (const BrokerEndpoint* b = find_broker(*metadata, leader_id)) {
      return HostPort{b->host, uint16_t(b->port)};
    }
  }
  return std::nullopt;
}

Result<QuorumAnswer> ask(WireClient& client) {
  protocol::DescribeQuorumRequest request;
  protocol::DescribeQuorumRequest::TopicData topic;
  topic.topic_name = kMetadataTopic;
  topic.partitions.push_back({0});
  request.topics.push_back(std::move(topic));
  ASSIGN_OR_RETURN(auto answer, client.call<protocol::DescribeQuorumResponse>(request));
  auto decoded = to_quorum_answer(answer.body);
  if (!decoded.ok()) {
    return Error(decoded.error().kind(), client.address().to_string() + ": " + decoded.error().message());
  }
  decoded->status.answered_by = client.address().to_string();
  return decoded;
}

}  // namespace

Result<QuorumAnswer> to_quorum_answer(const protocol::DescribeQuorumResponse& response) {
  if (response.error_code != 0) {
    return Error(ErrorKind::kIo, "DescribeQuorum failed: " + error_text(response.error_code, response.error_message));
  }
  QuorumAnswer out;
  for (const auto& node : response.nodes) {
    for (const auto& l : node.listeners) {
      out.status.endpoints[node.node_id].push_back(l.name + "://" + l.host + ":" + std::to_string(l.port));
    }
  }
  for (const auto& topic : response.topics) {
    if (topic.topic_name != kMetadataTopic) continue;
    for (const auto& p : topic.partitions) {
      if (p.partition_index != 0) continue;
      if (p.error_code == int16_t(protocol::ErrorCode::kNotLeaderOrFollower)) {
        out.leader_elsewhere = true;
        out.leader_id = p.leader_id;
        return out;
      }
      if (p.error_code != 0) {
        return Error(ErrorKind::kIo, "DescribeQuorum failed: " + error_text(p.error_code, p.error_message));
      }
      out.leader_id = out.status.leader_id = p.leader_id;
      out.status.leader_epoch = p.leader_epoch;
      out.status.high_watermark = p.high_watermark;
      for (const auto& v : p.current_voters) out.status.voters.push_back(to_replica(v));
      for (const auto& o : p.observers) out.status.observers.push_back(to_replica(o));
      return out;
    }
  }
  return Error(ErrorKind::kIo, "DescribeQuorum answer without __cluster_metadata-0");
}

const QuorumReplica* quorum_leader(const QuorumStatus& status) {
  for (const QuorumReplica& v : status.voters) {
    if (v.id == status.leader_id) return &v;
  }
  return nullptr;
}

int64_t max_follower_lag(const QuorumStatus& status) {
  const QuorumReplica* leader = quorum_leader(status);
  if (leader == nullptr) return -1;
  int64_t lowest = leader->log_end_offset;
  for (const QuorumReplica& v : status.voters) lowest = std::min(lowest, v.log_end_offset);
  return leader->log_end_offset - lowest;
}

int64_t max_follower_lag_time_ms(const QuorumStatus& status) {
  const QuorumReplica* leader = quorum_leader(status);
  if (leader == nullptr || status.voters.empty()) return -1;
  // Kafka takes the first voter with the smallest log end offset.
  const QuorumReplica* furthest = &status.voters.front();
  for (const QuorumReplica& v : status.voters) {
    if (v.log_end_offset < furthest->log_end_offset) furthest = &v;
  }
  if (furthest == leader) return 0;
  if (leader->last_caught_up_timestamp == -1 || furthest->last_caught_up_timestamp == -1) return -1;
  return leader->last_caught_up_timestamp - furthest->last_caught_up_timestamp;
}

Result<QuorumStatus> fetch_quorum_status(const std::vector<HostPort>& first, const ClusterMetadata* metadata,
                                         int timeout_ms) {
  ASSIGN_OR_RETURN(WireClient client, WireClient::connect_any(first, timeout_ms));
  std::string path = client.address().to_string();
  for (int hop = 0;; ++hop) {
    if (!client.serves(protocol::ApiKey::kDescribeQuorum)) {
      return Error(ErrorKind::kUnsupported,
                   client.address().to_string() +
                       " does not answer DescribeQuorum (a broker-only node): ask a controller with "
                       "--bootstrap-controller HOST:PORT");
    }
    ASSIGN_OR_RETURN(QuorumAnswer answer, ask(client));
    if (!answer.leader_elsewhere) return answer.status;
    if (answer.leader_id < 0) {
      return Error(ErrorKind::kIo, "the metadata quorum has no leader right now (asked " + path + ")");
    }
    if (hop + 1 >= kMaxLeaderHops) {
      return Error(ErrorKind::kIo, "no quorum leader answered after " + std::to_string(kMaxLeaderHops) +
                                       " hops (" + path + ")");
    }
    std::optional<HostPort> next = leader_address(answer.status, answer.leader_id, metadata);
    if (!next) {
      return Error(ErrorKind::kIo, "the metadata quorum leader is node " + std::to_string(answer.leader_id) +
                                       ", whose address is unknown here: ask it with --bootstrap-controller HOST:PORT");
    }
    ASSIGN_OR_RETURN(client, WireClient::connect(*next, timeout_ms));
    path += " -> " + next->to_string();
  }
}

}  // namespace samsa::cli

#include "controller/raft_wire.h"

#include <algorithm>
#include <limits>

#include "base/assert.h"

namespace samsa {
namespace {

using protocol::ErrorCode;
using raft::LogIndex;
using raft::MessageType;
using raft::Term;

// Push kinds on the wire (SamsaRaftPush Kind).
enum class PushKind : int8_t { kAppend = 0, kHeartbeat = 1, kSnapshot = 2 };
enum class AnswerKind : int8_t { kAppendResponse = 0, kHeartbeatResponse = 1 };
// Bytes an entry costs on the wire besides its data (epoch, kind, length, tags).
constexpr size_t kEntryOverheadBytes = 32;
// The request's fixed part, with room for the cluster id.
constexpr size_t kPushOverheadBytes = 256;

int32_t epoch32(Term term) {
  ASSERT_MSG(term.value() >= 0 && term.value() <= std::numeric_limits<int32_t>::max(), "epoch beyond int32");
  return int32_t(term.value());
}

bool contains(const std::vector<NodeId>& ids, NodeId id) { return std::find(ids.begin(), ids.end(), id) != ids.end(); }

// The checks every inbound raft request passes (docs/formats/raft-wire.md).
ErrorCode check_peer(const std::optional<std::string>& cluster_id, NodeId destination, NodeId source,
                     const RaftWireIdentity& me) {
  if (cluster_id && *cluster_id != me.cluster_id) return ErrorCode::kInconsistentClusterId;
  if (destination != kNoNode && destination != me.self) return ErrorCode::kInvalidVoterKey;
  if (!contains(me.voters, source)) return ErrorCode::kInconsistentVoterSet;
  return ErrorCode::kNone;
}

// Vote and EndQuorumEpoch, before any field of theirs is read: this
// cluster, exactly one topic with one partition, and that is
// __cluster_metadata-0 (Kafka answers each at the level it does here).
template <typename KRaftRequest>
ErrorCode check_metadata_partition(const KRaftRequest& request, const RaftWireIdentity& me) {
  if (request.cluster_id && *request.cluster_id != me.cluster_id) return ErrorCode::kInconsistentClusterId;
  if (request.topics.size() != 1 || request.topics[0].partitions.size() != 1) return ErrorCode::kInvalidRequest;
  const auto& topic = request.topics[0];
  if (topic.topic_name != kMetadataTopicName || topic.partitions[0].partition_index != 0) {
    return ErrorCode::kUnknownTopicOrPartition;
  }
  return ErrorCode::kNone;
}

InboundRaftRequest refused(ErrorCode error) {
  InboundRaftRequest out;
  out.error = error;
  return out;
}

Error peer_error(int16_t code) {
  return Error(ErrorKind::kInvalidArgument, std::string("the peer answered ") + protocol::error_name(code));
}

}  // namespace

bool is_raft_request(MessageType type) {
  return type == MessageType::kVote || type == MessageType::kAppend || type == MessageType::kHeartbeat ||
         type == MessageType::kSnapshot || type == MessageType::kEndQuorum;
}

bool is_raft_response(MessageType type) { return !is_raft_request(type); }

bool fits_raft_message(const raft::Message& m) {
  if (m.type != MessageType::kSnapshot) return true;
  return m.snapshot && m.snapshot->data.size() + kPushOverheadBytes <= kMaxRaftMessageBytes;
}

protocol::VoteRequest encode_vote_request(const raft::Message& m, std::string_view cluster_id) {
  ASSERT(m.type == MessageType::kVote);
  protocol::VoteRequest request;
  request.cluster_id = std::string(cluster_id);
  request.voter_id = m.to.value();
  protocol::VoteRequest::TopicData topic;
  topic.topic_name = std::string(kMetadataTopicName);
  protocol::VoteRequest::PartitionData p;
  p.partition_index = 0;
  p.candidate_epoch = epoch32(m.term);
  p.candidate_id = m.from.value();
  p.last_offset_epoch = epoch32(m.log_term);
  p.last_offset = m.log_index.value();  // our last index = KRaft's end offset
  p.pre_vote = m.pre_vote;
  topic.partitions.push_back(p);
  request.topics.push_back(std::move(topic));
  return request;
}

protocol::SamsaRaftPushRequest encode_push_request(const raft::Message& m, std::string_view cluster_id) {
  ASSERT(m.type == MessageType::kAppend || m.type == MessageType::kHeartbeat || m.type == MessageType::kSnapshot);
  protocol::SamsaRaftPushRequest request;
  request.cluster_id = std::string(cluster_id);
  request.leader_id = m.from.value();
  request.destination_id = m.to.value();
  request.leader_epoch = m.term.value();
  request.commit_index = m.commit.value();
  switch (m.type) {
    case MessageType::kAppend: {
      request.kind = int8_t(PushKind::kAppend);
      request.prev_index = m.log_index.value();
      request.prev_epoch = m.log_term.value();
      size_t bytes = kPushOverheadBytes;
      for (const raft::Entry& e : m.entries) {
        bytes += e.data.size() + kEntryOverheadBytes;
        bool full = request.entries.size() == kMaxRaftEntriesPerMessage || bytes > kMaxRaftMessageBytes;
        if (full && !request.entries.empty()) break;
        protocol::SamsaRaftPushRequest::Entry wire;
        wire.epoch = e.term.value();
        wire.kind = int8_t(e.kind);
        wire.data = e.data;
        request.entries.push_back(std::move(wire));
      }
      // A cut append keeps its commit index: the follower commits
      // min(commit, its last new entry), so it never runs ahead of it.
      break;
    }
    case MessageType::kHeartbeat:
      request.kind = int8_t(PushKind::kHeartbeat);
      break;
    default:
      ASSERT(m.snapshot);
      request.kind = int8_t(PushKind::kSnapshot);
      request.snapshot_index = m.snapshot->index.value();
      request.snapshot_epoch = m.snapshot->term.value();
      request.snapshot_data = m.snapshot->data;
      break;
  }
  return request;
}

protocol::EndQuorumEpochRequest encode_end_quorum_request(const raft::Message& m, std::string_view cluster_id) {
  ASSERT(m.type == MessageType::kEndQuorum);
  protocol::EndQuorumEpochRequest request;
  request.cluster_id = std::string(cluster_id);
  protocol::EndQuorumEpochRequest::TopicData topic;
  topic.topic_name = std::string(kMetadataTopicName);
  protocol::EndQuorumEpochRequest::PartitionData p;
  p.partition_index = 0;
  p.leader_id = m.from.value();
  p.leader_epoch = epoch32(m.term);
  for (NodeId successor : m.successors) {
    p.preferred_successors.push_back(successor.value());  // v0
    protocol::EndQuorumEpochRequest::ReplicaInfo candidate;
    candidate.candidate_id = successor.value();  // v1+; no directory ids yet
    p.preferred_candidates.push_back(candidate);
  }
  topic.partitions.push_back(std::move(p));
  request.topics.push_back(std::move(topic));
  return request;
}

InboundRaftRequest decode_end_quorum_request(const protocol::EndQuorumEpochRequest& request, int16_t version,
                                             const RaftWireIdentity& me) {
  if (ErrorCode e = check_metadata_partition(request, me); e != ErrorCode::kNone) return refused(e);
  const auto& p = request.topics[0].partitions[0];
  if (ErrorCode e = check_peer(std::nullopt, kNoNode, NodeId(p.leader_id), me); e != ErrorCode::kNone) {
    return refused(e);
  }
  if (p.leader_epoch < 1) return refused(ErrorCode::kInvalidRequest);
  size_t named = version == 0 ? p.preferred_successors.size() : p.preferred_candidates.size();
  if (named > me.voters.size()) return refused(ErrorCode::kInvalidRequest);  // before the quadratic check below
  std::vector<NodeId> successors;
  if (version == 0) {
    for (int32_t id : p.preferred_successors) successors.push_back(NodeId(id));
  } else {
    for (const auto& c : p.preferred_candidates) successors.push_back(NodeId(c.candidate_id));
  }
  // Each voter at most once, and only voters: so never more than the voters.
  for (size_t i = 0; i < successors.size(); ++i) {
    bool repeated = std::find(successors.begin(), successors.begin() + i, successors[i]) != successors.begin() + i;
    if (repeated || !contains(me.voters, successors[i])) return refused(ErrorCode::kInvalidRequest);
  }
  InboundRaftRequest out;
  raft::Message& m = out.message;
  m.type = MessageType::kEndQuorum;
  m.from = NodeId(p.leader_id);
  m.to = me.self;
  m.term = Term(p.leader_epoch);
  m.successors = std::move(successors);
  return out;
}

InboundRaftRequest decode_vote_request(const protocol::VoteRequest& request, int16_t version,
                                       const RaftWireIdentity& me) {
  if (ErrorCode e = check_metadata_partition(request, me); e != ErrorCode::kNone) return refused(e);
  const auto& p = request.topics[0].partitions[0];
  NodeId destination = version >= 1 ? NodeId(request.voter_id) : kNoNode;
  if (ErrorCode e = check_peer(std::nullopt, destination, NodeId(p.candidate_id), me); e != ErrorCode::kNone) {
    return refused(e);
  }
  if (p.candidate_epoch < 0 || p.last_offset_epoch < 0 || p.last_offset < 0 || p.last_offset_epoch > p.candidate_epoch) {
    return refused(ErrorCode::kInvalidRequest);
  }
  InboundRaftRequest out;
  raft::Message& m = out.message;
  m.type = MessageType::kVote;
  m.from = NodeId(p.candidate_id);
  m.to = me.self;
  m.term = Term(p.candidate_epoch);
  m.pre_vote = p.pre_vote;
  m.log_index = LogIndex(p.last_offset);
  m.log_term = Term(p.last_offset_epoch);
  return out;
}

namespace {

// The entries of an Append: contiguous after prev, epochs never going down
// and never beyond the leader's (what RaftLog asserts of its entries).
ErrorCode decode_entries(const protocol::SamsaRaftPushRequest& request, raft::Message& m) {
  if (request.entries.size() > kMaxRaftEntriesPerMessage) return ErrorCode::kInvalidRequest;
  if (request.prev_index < 0 || request.prev_epoch < 0 || request.prev_epoch > request.leader_epoch) {
    return ErrorCode::kInvalidRequest;
  }
  m.log_index = LogIndex(request.prev_index);
  m.log_term = Term(request.prev_epoch);
  int64_t epoch = request.prev_epoch;
  m.entries.reserve(request.entries.size());
  for (const auto& wire : request.entries) {
    if (wire.epoch < epoch || wire.epoch > request.leader_epoch) return ErrorCode::kInvalidRequest;
    if (wire.kind != int8_t(raft::EntryKind::kNormal) && wire.kind != int8_t(raft::EntryKind::kLeaderChange)) {
      return ErrorCode::kInvalidRequest;
    }
    epoch = wire.epoch;
    m.entries.push_back(raft::Entry{Term(wire.epoch), m.log_index + int64_t(m.entries.size()) + 1,
                                    raft::EntryKind(wire.kind), wire.data});
  }
  return ErrorCode::kNone;
}

}  // namespace

InboundRaftRequest decode_push_request(const protocol::SamsaRaftPushRequest& request, const RaftWireIdentity& me) {
  if (ErrorCode e = check_peer(request.cluster_id, NodeId(request.destination_id), NodeId(request.leader_id), me);
      e != ErrorCode::kNone) {
    return refused(e);
  }
  if (request.leader_epoch < 1 || request.commit_index < 0) return refused(ErrorCode::kInvalidRequest);
  InboundRaftRequest out;
  raft::Message& m = out.message;
  m.from = NodeId(request.leader_id);
  m.to = me.self;
  m.term = Term(request.leader_epoch);
  m.commit = LogIndex(request.commit_index);
  bool carries_entries = !request.entries.empty();
  bool carries_snapshot = request.snapshot_index != 0 || request.snapshot_epoch != 0 || !request.snapshot_data.empty();
  switch (PushKind(request.kind)) {
    case PushKind::kAppend:
      m.type = MessageType::kAppend;
      if (carries_snapshot) return refused(ErrorCode::kInvalidRequest);
      if (ErrorCode e = decode_entries(request, m); e != ErrorCode::kNone) return refused(e);
      return out;
    case PushKind::kHeartbeat:
      m.type = MessageType::kHeartbeat;
      if (carries_entries || carries_snapshot) return refused(ErrorCode::kInvalidRequest);
      return out;
    case PushKind::kSnapshot:
      m.type = MessageType::kSnapshot;
      if (carries_entries || request.snapshot_index < 1 || request.snapshot_epoch < 1 ||
          request.snapshot_epoch > request.leader_epoch) {
        return refused(ErrorCode::kInvalidRequest);
      }
      m.snapshot = std::make_shared<raft::Snapshot>(
          raft::Snapshot{LogIndex(request.snapshot_index), Term(request.snapshot_epoch), request.snapshot_data});
      return out;
  }
  return refused(ErrorCode::kInvalidRequest);
}

protocol::VoteResponse encode_vote_response(const std::optional<raft::Message>& answer, ErrorCode error) {
  protocol::VoteResponse response;
  // Kafka answers a wrong cluster id or a malformed request at the top
  // level, a wrong partition or voter in the partition.
  bool top_level = error == ErrorCode::kInconsistentClusterId || error == ErrorCode::kInvalidRequest;
  if (top_level) {
    response.error_code = int16_t(error);
    return response;
  }
  if (error == ErrorCode::kNone && !answer) return response;  // nothing to say: no topics
  protocol::VoteResponse::TopicResult topic;
  topic.topic_name = std::string(kMetadataTopicName);
  protocol::VoteResponse::PartitionResult p;
  p.partition_index = 0;
  p.error_code = int16_t(error);
  p.leader_id = -1;
  p.leader_epoch = -1;
  if (answer) {
    ASSERT(answer->type == MessageType::kVoteResponse);
    p.leader_epoch = epoch32(answer->term);
    p.vote_granted = !answer->reject;
  }
  topic.partitions.push_back(p);
  response.topics.push_back(std::move(topic));
  return response;
}

protocol::EndQuorumEpochResponse encode_end_quorum_response(ErrorCode error) {
  protocol::EndQuorumEpochResponse response;
  if (error == ErrorCode::kInconsistentClusterId || error == ErrorCode::kInvalidRequest) {
    response.error_code = int16_t(error);
    return response;
  }
  protocol::EndQuorumEpochResponse::TopicResult topic;
  topic.topic_name = std::string(kMetadataTopicName);
  protocol::EndQuorumEpochResponse::PartitionResult p;
  p.partition_index = 0;
  p.error_code = int16_t(error);
  p.leader_id = -1;  // the core's view is not asked for: the resigning leader is going away
  p.leader_epoch = -1;
  topic.partitions.push_back(p);
  response.topics.push_back(std::move(topic));
  return response;
}

protocol::SamsaRaftPushResponse encode_push_response(const std::optional<raft::Message>& answer, ErrorCode error) {
  protocol::SamsaRaftPushResponse response;
  response.error_code = int16_t(error);
  if (error != ErrorCode::kNone || !answer) return response;
  ASSERT(answer->type == MessageType::kAppendResponse || answer->type == MessageType::kHeartbeatResponse);
  response.answered = true;
  response.kind = int8_t(answer->type == MessageType::kAppendResponse ? AnswerKind::kAppendResponse
                                                                      : AnswerKind::kHeartbeatResponse);
  response.epoch = answer->term.value();
  response.reject = answer->reject;
  response.index = answer->log_index.value();
  response.reject_hint = answer->reject_hint.value();
  return response;
}

namespace {

raft::Message answer_to(const raft::Message& request, MessageType type, Term term) {
  raft::Message m;
  m.type = type;
  m.from = request.to;
  m.to = request.from;
  m.term = term;
  return m;
}

}  // namespace

Result<std::optional<raft::Message>> decode_vote_response(const protocol::VoteResponse& response,
                                                          const raft::Message& request) {
  if (response.error_code != 0) return peer_error(response.error_code);
  if (response.topics.empty()) return std::optional<raft::Message>();
  if (response.topics.size() != 1 || response.topics[0].partitions.size() != 1 ||
      response.topics[0].topic_name != kMetadataTopicName || response.topics[0].partitions[0].partition_index != 0) {
    return Error(ErrorKind::kInvalidArgument, "a Vote response for another partition than __cluster_metadata-0");
  }
  const auto& p = response.topics[0].partitions[0];
  if (p.error_code != 0) return peer_error(p.error_code);
  if (p.leader_epoch < 0) return Error(ErrorKind::kInvalidArgument, "a Vote response with a negative epoch");
  raft::Message m = answer_to(request, MessageType::kVoteResponse, Term(p.leader_epoch));
  m.pre_vote = request.pre_vote;  // the answer is to the round we asked in
  m.reject = !p.vote_granted;
  return std::optional<raft::Message>(std::move(m));
}

Result<std::optional<raft::Message>> decode_end_quorum_response(const protocol::EndQuorumEpochResponse& response) {
  if (response.error_code != 0) return peer_error(response.error_code);
  for (const auto& topic : response.topics) {
    for (const auto& p : topic.partitions) {
      if (p.error_code != 0) return peer_error(p.error_code);
    }
  }
  return std::optional<raft::Message>();
}

Result<std::optional<raft::Message>> decode_push_response(const protocol::SamsaRaftPushResponse& response,
                                                          const raft::Message& request) {
  if (response.error_code != 0) return peer_error(response.error_code);
  if (!response.answered) return std::optional<raft::Message>();
  if (response.kind != int8_t(AnswerKind::kAppendResponse) && response.kind != int8_t(AnswerKind::kHeartbeatResponse)) {
    return Error(ErrorKind::kInvalidArgument, "a SamsaRaftPush response of unknown kind " + std::to_string(response.kind));
  }
  if (response.epoch < 0 || response.index < 0 || response.reject_hint < 0) {
    return Error(ErrorKind::kInvalidArgument, "a SamsaRaftPush response with a negative epoch or index");
  }
  MessageType type = response.kind == int8_t(AnswerKind::kAppendResponse) ? MessageType::kAppendResponse
                                                                          : MessageType::kHeartbeatResponse;
  raft::Message m = answer_to(request, type, Term(response.epoch));
  m.reject = response.reject;
  m.log_index = LogIndex(response.index);
  m.reject_hint = LogIndex(response.reject_hint);
  return std::optional<raft::Message>(std::move(m));
}

}  // namespace samsa

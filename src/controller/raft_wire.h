#pragma once
// raft_wire: raft::Message <-> Kafka-framed requests and responses on the
// controller listener (docs/formats/raft-wire.md, field by field).
//
//   kVote (+ pre-vote)              Vote request (52, v2: PreVote, KIP-996)
//   kVoteResponse                   its Vote response
//   kAppend / kHeartbeat / kSnapshot  SamsaRaftPush request (1000, private)
//   kAppendResponse / kHeartbeatResponse  its SamsaRaftPush response
//   kEndQuorum                      EndQuorumEpoch request (54, v1); its
//                                   response only acknowledges it
//
// Every raft request travels on the sender's connection to its peer and the
// peer's answer comes back as the Kafka response to it (the core answers
// within the step that received the request: RaftNetworkTransport catches
// that answer). "Answered=false" / an empty Vote Topics array: the core had
// nothing to say (a stale or ignored message).
//
// Pure: values in, values out. A decode checks what it is handed (cluster
// id, destination, source, counts against the written limits below; the
// frame size against kMaxRaftMessageBytes before the codec runs) and says
// which Kafka error code answers it.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "protocol/error_code.h"
#include "protocol/generated/end_quorum_epoch.h"
#include "protocol/generated/samsa_raft_push.h"
#include "protocol/generated/vote.h"
#include "raft/message.h"

namespace samsa {

inline constexpr std::string_view kMetadataTopicName = "__cluster_metadata";
// The versions this node sends (it talks to nodes of its own build).
inline constexpr int16_t kVoteVersion = 2;
inline constexpr int16_t kRaftPushVersion = 0;
inline constexpr int16_t kEndQuorumEpochVersion = 1;
// Resource budget (docs/operations.md): a larger request is refused (the
// connection is closed), a larger append is cut to fit by the sender.
inline constexpr size_t kMaxRaftEntriesPerMessage = 1024;
inline constexpr size_t kMaxRaftMessageBytes = 8 * 1024 * 1024;

// Who this node is, to check what arrives.
struct RaftWireIdentity {
  std::string cluster_id;
  NodeId self;
  std::vector<NodeId> voters;     // may vote and lead
  std::vector<NodeId> observers;  // replicate only
};

// A decoded inbound request: the message for the core, or the error that
// answers it (`error` != kNone: `message` is meaningless).
struct InboundRaftRequest {
  protocol::ErrorCode error = protocol::ErrorCode::kNone;
  raft::Message message;
};

bool is_raft_request(raft::MessageType type);   // kVote, kAppend, kHeartbeat, kSnapshot, kEndQuorum
bool is_raft_response(raft::MessageType type);  // the others

// Whether the sender can put `m` on the wire at all: a snapshot larger than
// kMaxRaftMessageBytes cannot (it is sent whole; Kafka's FetchSnapshot
// sends chunks). Appends always fit (cut below).
bool fits_raft_message(const raft::Message& m);

// Outbound requests (is_raft_request(m.type)). An append larger than
// kMaxRaftMessageBytes or kMaxRaftEntriesPerMessage is cut at the last entry
// that fits (at least one is kept; the leader sends the rest next).
protocol::VoteRequest encode_vote_request(const raft::Message& m, std::string_view cluster_id);
protocol::SamsaRaftPushRequest encode_push_request(const raft::Message& m, std::string_view cluster_id);
protocol::EndQuorumEpochRequest encode_end_quorum_request(const raft::Message& m, std::string_view cluster_id);

// Inbound requests, checked against `me`.
InboundRaftRequest decode_vote_request(const protocol::VoteRequest& request, int16_t version,
                                       const RaftWireIdentity& me);
InboundRaftRequest decode_push_request(const protocol::SamsaRaftPushRequest& request, const RaftWireIdentity& me);
InboundRaftRequest decode_end_quorum_request(const protocol::EndQuorumEpochRequest& request, int16_t version,
                                             const RaftWireIdentity& me);

// Responses: `answer` is the core's reply (nullopt: none); `error` != kNone
// answers a refused request.
protocol::VoteResponse encode_vote_response(const std::optional<raft::Message>& answer, protocol::ErrorCode error);
protocol::SamsaRaftPushResponse encode_push_response(const std::optional<raft::Message>& answer,
                                                     protocol::ErrorCode error);
// The core never answers a resignation: the response carries only `error`
// (in the partition, or at the top level for a wrong cluster id or a
// malformed request, as Kafka answers).
protocol::EndQuorumEpochResponse encode_end_quorum_response(protocol::ErrorCode error);

// Back on the sender: the core's reply to `request` (to = request.from,
// from = request.to), nullopt when there was none. An error code the peer
// answered with, or an answer that does not fit the request, is an Error
// (kInvalidArgument, naming Kafka's error).
Result<std::optional<raft::Message>> decode_vote_response(const protocol::VoteResponse& response,
                                                          const raft::Message& request);
// Never an answer for the core; an error the peer answered with is an Error.
Result<std::optional<raft::Message>> decode_end_quorum_response(const protocol::EndQuorumEpochResponse& response);
Result<std::optional<raft::Message>> decode_push_response(const protocol::SamsaRaftPushResponse& response,
                                                          const raft::Message& request);

}  // namespace samsa

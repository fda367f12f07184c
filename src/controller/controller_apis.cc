#include "controller/controller_apis.h"

#include "controller/raft_fetch_wire.h"

#include "base/byte_reader.h"
#include "base/log.h"
#include "protocol/codec.h"
#include "protocol/generated/describe_quorum.h"
#include "protocol/response_header.h"

namespace samsa {
namespace {

using protocol::ApiKey;

struct Range {
  ApiKey key;
  int16_t min;
  int16_t max;
};
constexpr Range kApiVersions{ApiKey::kApiVersions, 0, 4};
constexpr Range kDescribeQuorum{ApiKey::kDescribeQuorum, 0, 2};  // Kafka 3.9's
constexpr Range kVote{ApiKey::kVote, 0, 2};                      // v2: Kafka 4.0's pre-vote (KIP-996)
constexpr Range kEndQuorumEpoch{ApiKey::kEndQuorumEpoch, 0, 1};
constexpr Range kRaftPush{ApiKey::kSamsaRaftPush, 0, 0};
constexpr Range kRaftFetch{ApiKey::kSamsaRaftFetch, 0, 0};
constexpr Range kBrokerRegistration{ApiKey::kBrokerRegistration, 0, 4};
constexpr Range kBrokerHeartbeat{ApiKey::kBrokerHeartbeat, 0, 1};
constexpr Range kAlterPartition{ApiKey::kAlterPartition, 0, 3};  // Kafka 3.9's

bool in(const Range& r, int16_t key, int16_t version) {
  return int16_t(r.key) == key && version >= r.min && version <= r.max;
}

template <typename Response>
void respond(const protocol::RequestHeader& header, const Response& response, ReplyFn& reply) {
  OutBuffer out;
  protocol::begin_response(out, header.correlation_id, header.api_key, header.api_version);
  protocol::Encoder w(out);
  response.encode(w, header.api_version);
  protocol::finish_response(out);
  reply(Reply{ReplyKind::kSend, std::move(out)});
}

void close(const InboundFrame& frame, ReplyFn& reply, const std::string& why) {
  LOG_WARN("controller", "closing controller-listener connection from {}: {}", frame.peer, why);
  reply(Reply{ReplyKind::kClose, {}});
}

template <typename Body>
bool decode_body(Body& body, const protocol::RequestHeader& header, ByteReader& r) {
  return body.decode(r, header.api_version) && r.ok() && r.at_end();
}

}  // namespace

bool ControllerApis::answers(int16_t key, int16_t version) const {
  if (in(kApiVersions, key, version)) return true;
  if (quorum_ && in(kDescribeQuorum, key, version)) return true;
  if (lifecycle_ && (in(kBrokerRegistration, key, version) || in(kBrokerHeartbeat, key, version))) return true;
  if (alter_partition_ && in(kAlterPartition, key, version)) return true;
  if (transport_ && fetch_answerer_ && in(kRaftFetch, key, version)) return true;
  return transport_ && (in(kVote, key, version) || in(kEndQuorumEpoch, key, version) || in(kRaftPush, key, version));
}

void ControllerApis::fill_api_versions(protocol::ApiVersionsResponse& response) const {
  auto add = [&](const Range& r) {
    protocol::ApiVersionsResponse::ApiVersion v;
    v.api_key = int16_t(r.key);
    v.min_version = r.min;
    v.max_version = r.max;
    response.api_keys.push_back(v);
  };
  add(kApiVersions);
  if (transport_) {
    add(kVote);
    add(kEndQuorumEpoch);
  }
  if (quorum_) add(kDescribeQuorum);
  if (lifecycle_) {
    add(kBrokerRegistration);
    add(kBrokerHeartbeat);
  }
  if (alter_partition_) add(kAlterPartition);
  if (forwarded_.sink) forwarded_.list(response);
  // kRaftPush, kRaftFetch: private, never advertised.
}

void ControllerApis::on_frame(InboundFrame frame, ReplyFn reply) {
  if (frame.frame->size() > kMaxRaftMessageBytes) {
    return close(frame, reply, "a request of " + std::to_string(frame.frame->size()) + " bytes (at most " +
                                   std::to_string(kMaxRaftMessageBytes) + " on the controller listener)");
  }
  ByteReader r(*frame.frame);
  protocol::RequestHeader header;
  if (!header.decode(r)) return close(frame, reply, "malformed request header");
  if (header.api_key == int16_t(ApiKey::kApiVersions)) return api_versions(header, r, frame, reply);
  if (forwarded_.sink && forwarded_.handles(header.api_key, header.api_version)) {
    return forwarded_.sink->on_frame(std::move(frame), std::move(reply));  // it decodes the header again
  }
  if (!answers(header.api_key, header.api_version)) {
    return close(frame, reply,
                 std::string("unsupported ") + protocol::api_name(header.api_key) + " (key " +
                     std::to_string(header.api_key) + ") v" + std::to_string(header.api_version));
  }
  switch (ApiKey(header.api_key)) {
    case ApiKey::kDescribeQuorum: return describe_quorum(header, r, frame, reply);
    case ApiKey::kVote: return vote(header, r, frame, reply);
    case ApiKey::kEndQuorumEpoch: return end_quorum_epoch(header, r, frame, reply);
    case ApiKey::kBrokerRegistration: return broker_registration(header, r, frame, reply);
    case ApiKey::kBrokerHeartbeat: return broker_heartbeat(header, r, frame, reply);
    case ApiKey::kAlterPartition: return alter_partition(header, r, frame, reply);
    case ApiKey::kSamsaRaftFetch: return raft_fetch(header, r, frame, reply);
    default: return raft_push(header, r, frame, reply);
  }
}

void ControllerApis::api_versions(const protocol::RequestHeader& header, ByteReader& body, const InboundFrame& frame,
                                  ReplyFn& reply) const {
  protocol::ApiVersionsResponse response;
  fill_api_versions(response);
  if (!in(kApiVersions, header.api_key, header.api_version)) {
    // KIP-511: a too-new ApiVersions gets a v0 answer with our ranges.
    response.error_code = int16_t(protocol::ErrorCode::kUnsupportedVersion);
    OutBuffer out;
    protocol::begin_response_with_header(out, header.correlation_id, 0);
    protocol::Encoder w(out);
    response.encode(w, 0);
    protocol::finish_response(out);
    return reply(Reply{ReplyKind::kSend, std::move(out)});
  }
  protocol::ApiVersionsRequest request;
  if (!decode_body(request, header, body)) return close(frame, reply, "malformed ApiVersions request");
  respond(header, response, reply);
}

void ControllerApis::describe_quorum(const protocol::RequestHeader& header, ByteReader& body,
                                     const InboundFrame& frame, ReplyFn& reply) const {
  protocol::DescribeQuorumRequest request;
  if (!decode_body(request, header, body)) return close(frame, reply, "malformed DescribeQuorum request");
  respond(header, answer_describe_quorum(request, quorum_->describe_quorum()), reply);
}

void ControllerApis::vote(const protocol::RequestHeader& header, ByteReader& body, const InboundFrame& frame,
                          ReplyFn& reply) {
  protocol::VoteRequest request;
  if (!decode_body(request, header, body)) return close(frame, reply, "malformed Vote request");
  InboundRaftRequest in = decode_vote_request(request, header.api_version, transport_->identity());
  std::optional<raft::Message> answer;
  if (in.error == protocol::ErrorCode::kNone) answer = transport_->deliver(in.message);
  if (answer && answer->type != raft::MessageType::kVoteResponse) answer.reset();
  respond(header, encode_vote_response(answer, in.error), reply);
}

void ControllerApis::end_quorum_epoch(const protocol::RequestHeader& header, ByteReader& body,
                                      const InboundFrame& frame, ReplyFn& reply) {
  protocol::EndQuorumEpochRequest request;
  if (!decode_body(request, header, body)) return close(frame, reply, "malformed EndQuorumEpoch request");
  InboundRaftRequest in = decode_end_quorum_request(request, header.api_version, transport_->identity());
  if (in.error == protocol::ErrorCode::kNone) transport_->deliver(in.message);  // the core answers nothing
  respond(header, encode_end_quorum_response(in.error), reply);
}

void ControllerApis::raft_push(const protocol::RequestHeader& header, ByteReader& body, const InboundFrame& frame,
                               ReplyFn& reply) {
  protocol::SamsaRaftPushRequest request;
  if (!decode_body(request, header, body)) return close(frame, reply, "malformed SamsaRaftPush request");
  InboundRaftRequest in = decode_push_request(request, transport_->identity());
  std::optional<raft::Message> answer;
  if (in.error == protocol::ErrorCode::kNone) answer = transport_->deliver(in.message);
  if (answer && answer->type == raft::MessageType::kVoteResponse) answer.reset();
  respond(header, encode_push_response(answer, in.error), reply);
}

void ControllerApis::raft_fetch(const protocol::RequestHeader& header, ByteReader& body, const InboundFrame& frame,
                                ReplyFn& reply) {
  protocol::SamsaRaftFetchRequest request;
  if (!decode_body(request, header, body)) return close(frame, reply, "malformed SamsaRaftFetch request");
  InboundRaftFetch in = decode_fetch_request(request, transport_->identity());
  raft::FetchResponse answer;
  if (in.error == protocol::ErrorCode::kNone) answer = fetch_answerer_(in.request);
  respond(header, encode_fetch_response(answer, in.error), reply);
}

void ControllerApis::broker_registration(const protocol::RequestHeader& header, ByteReader& body,
                                         const InboundFrame& frame, ReplyFn& reply) {
  protocol::BrokerRegistrationRequest request;
  if (!decode_body(request, header, body)) return close(frame, reply, "malformed BrokerRegistration request");
  lifecycle_->broker_registration(request, [header, reply](protocol::BrokerRegistrationResponse response) mutable {
    respond(header, response, reply);
  });
}

void ControllerApis::broker_heartbeat(const protocol::RequestHeader& header, ByteReader& body,
                                      const InboundFrame& frame, ReplyFn& reply) {
  protocol::BrokerHeartbeatRequest request;
  if (!decode_body(request, header, body)) return close(frame, reply, "malformed BrokerHeartbeat request");
  lifecycle_->broker_heartbeat(request, [header, reply](protocol::BrokerHeartbeatResponse response) mutable {
    respond(header, response, reply);
  });
}

void ControllerApis::alter_partition(const protocol::RequestHeader& header, ByteReader& body,
                                     const InboundFrame& frame, ReplyFn& reply) {
  protocol::AlterPartitionRequest request;
  if (!decode_body(request, header, body)) return close(frame, reply, "malformed AlterPartition request");
  alter_partition_(request, header.api_version, [header, reply](protocol::AlterPartitionResponse response) mutable {
    respond(header, response, reply);
  });
}

}  // namespace samsa

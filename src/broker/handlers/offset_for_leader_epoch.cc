// OffsetForLeaderEpoch (API 23, v0-4; KIP-101, KIP-279, KIP-320): for each
// partition, the end offset of the requested leader epoch in the leader's
// leader-epoch cache (LeaderEpochFileCache.endOffsetFor: the latest epoch
// ends at the log end; an older one where the next higher epoch starts; an
// unknown or newer one is UNDEFINED, -1/-1, without an error). Followers
// use it to find where their log diverges; consumers (v3+, ReplicaId -1) to
// detect truncation after a leader change.
//
// As Kafka's Partition.lastOffsetForLeaderEpoch: only the leader answers
// (NOT_LEADER_OR_FOLLOWER elsewhere) unless ReplicaId is -2 (the debugging
// id, and what v0-2 requests carry); CurrentLeaderEpoch (v2+) older than
// ours is FENCED_LEADER_EPOCH, newer UNKNOWN_LEADER_EPOCH.
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/request.h"
#include "protocol/error_code.h"
#include "protocol/generated/offset_for_leader_epoch.h"

namespace samsa {
namespace {

using protocol::ErrorCode;
using protocol::OffsetForLeaderEpochRequest;
using protocol::OffsetForLeaderEpochResponse;
using EpochEndOffset = OffsetForLeaderEpochResponse::EpochEndOffset;

constexpr int32_t kDebuggingReplicaId = -2;

EpochEndOffset failed(int32_t partition, ErrorCode code) {
  EpochEndOffset out;
  out.partition = partition;
  out.error_code = int16_t(code);
  return out;
}

EpochEndOffset end_offset(Broker& broker, const std::string& topic,
                          const OffsetForLeaderEpochRequest::OffsetForLeaderPartition& requested, int32_t replica_id) {
  Partition* p = broker.replicas().get(TopicPartition{topic, PartitionId(requested.partition)});
  if (!p) return failed(requested.partition, ErrorCode::kUnknownTopicOrPartition);
  if (replica_id != kDebuggingReplicaId && !p->is_leader()) {
    return failed(requested.partition, ErrorCode::kNotLeaderOrFollower);
  }
  if (requested.current_leader_epoch >= 0) {
    if (requested.current_leader_epoch < p->leader_epoch().value()) {
      return failed(requested.partition, ErrorCode::kFencedLeaderEpoch);
    }
    if (requested.current_leader_epoch > p->leader_epoch().value()) {
      return failed(requested.partition, ErrorCode::kUnknownLeaderEpoch);
    }
  }
  EpochEndOffset out;
  out.partition = requested.partition;
  if (std::optional<replication::EpochEndOffset> e = p->end_offset_for(LeaderEpoch(requested.leader_epoch))) {
    out.leader_epoch = e->epoch.value();
    out.end_offset = e->end_offset.value();
  }
  return out;
}

}  // namespace

void handle_offset_for_leader_epoch(Broker& broker, Request& request) {
  OffsetForLeaderEpochRequest body;
  if (!request.decode(body)) return;
  OffsetForLeaderEpochResponse response;
  for (const auto& topic : body.topics) {
    OffsetForLeaderEpochResponse::OffsetForLeaderTopicResult out;
    out.topic = topic.topic;
    for (const auto& p : topic.partitions) out.partitions.push_back(end_offset(broker, topic.topic, p, body.replica_id));
    response.topics.push_back(std::move(out));
  }
  request.respond(response);
}

}  // namespace samsa

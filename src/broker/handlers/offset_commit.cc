// OffsetCommit (v0-9): validates topics against the metadata image, then
// lets the coordinator check membership and append the offset records; the
// answer goes out once the __consumer_offsets partition's ISR has them
// (Kafka's acks=all append), or with an error after offsets.commit.timeout.ms.
// Until then the offsets are pending: OffsetFetch does not return them.
#include <memory>
#include <utility>

#include "base/assert.h"
#include "broker/broker.h"
#include "broker/handlers/group_common.h"
#include "broker/produce_purgatory.h"
#include "broker/replica_manager.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_code.h"
#include "protocol/generated/offset_commit.h"

namespace samsa {
namespace {

using protocol::ErrorCode;
using protocol::OffsetCommitRequest;
using protocol::OffsetCommitResponse;

bool partition_exists(Broker& broker, const std::string& topic, int32_t partition) {
  const TopicState* t = broker.image().topic(topic);
  return t && partition >= 0 && size_t(partition) < t->partitions.size();
}

// Kafka's GroupMetadataManager.storeOffsets: how an append that did not
// reach the ISR is answered (retriable for the client either way).
ErrorCode replication_error(std::optional<replication::ProduceError> outcome) {
  if (!outcome) return ErrorCode::kRequestTimedOut;
  switch (*outcome) {
    case replication::ProduceError::kNone: return ErrorCode::kNone;
    case replication::ProduceError::kNotLeaderOrFollower: return ErrorCode::kNotCoordinator;
    case replication::ProduceError::kNotEnoughReplicas:
    case replication::ProduceError::kNotEnoughReplicasAfterAppend: return ErrorCode::kCoordinatorNotAvailable;
  }
  return ErrorCode::kUnknownServerError;
}

}  // namespace

void handle_offset_commit(Broker& broker, Request& request) {
  OffsetCommitRequest body;
  if (!request.decode(body)) return;
  ErrorCode group_error = broker.groups().check_coordinator(body.group_id);
  group::CommitRequest r;
  r.group_id = body.group_id;
  r.generation = body.generation_id_or_member_epoch;
  r.member_id = body.member_id;
  r.group_instance_id = body.group_instance_id;
  r.retention_ms = body.retention_time_ms;
  // Each partition's slot in the response: an error now, or the index of its
  // commit in r.partitions.
  std::vector<std::pair<ErrorCode, size_t>> slots;
  for (const auto& topic : body.topics) {
    for (const auto& p : topic.partitions) {
      if (group_error != ErrorCode::kNone) {
        slots.push_back({group_error, 0});
      } else if (!partition_exists(broker, topic.name, p.partition_index)) {
        slots.push_back({ErrorCode::kUnknownTopicOrPartition, 0});
      } else {
        slots.push_back({ErrorCode::kNone, r.partitions.size()});
        r.partitions.push_back({topic.name, p.partition_index, p.committed_offset, p.committed_leader_epoch,
                                p.committed_metadata, request.version() == 1 ? p.commit_timestamp : -1});
      }
    }
  }
  group::CommitResult committed;
  std::optional<ProduceWait> appended;
  if (!r.partitions.empty()) {
    broker.groups().take_last_append();
    committed = broker.groups().coordinator().commit(r, broker.groups().now_ms());
    appended = broker.groups().take_last_append();
  }
  const std::vector<ErrorCode>& results = committed.errors;
  OffsetCommitResponse response;
  size_t i = 0;
  for (const auto& topic : body.topics) {
    OffsetCommitResponse::OffsetCommitResponseTopic out;
    out.name = topic.name;
    for (const auto& p : topic.partitions) {
      auto [error, index] = slots[i++];
      if (error == ErrorCode::kNone) error = results[index];
      OffsetCommitResponse::OffsetCommitResponsePartition part;
      part.partition_index = p.partition_index;
      part.error_code = int16_t(error);
      out.partitions.push_back(part);
    }
    response.topics.push_back(std::move(out));
  }
  ASSERT_MSG(appended || committed.pending.offsets.empty(), "offsets pending without an append");
  if (!appended) return request.respond(response);
  auto parked = std::make_shared<std::pair<Request, OffsetCommitResponse>>(std::move(request), std::move(response));
  broker.replicas().produce_purgatory().park(
      {*appended}, broker.groups().commit_timeout_ms(),
      [&broker, parked, pending = std::move(committed.pending)](ProducePurgatory::Outcomes outcomes) {
        auto& [request, response] = *parked;
        ErrorCode failed = replication_error(outcomes[0]);
        broker.groups().coordinator().finish_commit(pending, failed == ErrorCode::kNone);
        for (auto& topic : response.topics) {
          for (auto& p : topic.partitions) {
            if (p.error_code == int16_t(ErrorCode::kNone)) p.error_code = int16_t(failed);
          }
        }
        request.respond(response);
      });
}

}  // namespace samsa

#include "replication/alter_partition_channel.h"

#include "protocol/error_code.h"

namespace samsa {

using protocol::ErrorCode;
using replication::AlterPartitionError;

protocol::AlterPartitionRequest to_alter_partition_request(NodeId self, BrokerEpoch self_epoch, const Uuid& topic_id,
                                                           PartitionId partition,
                                                           const replication::AlterPartitionProposal& proposal) {
  protocol::AlterPartitionRequest req;
  req.broker_id = self.value();
  req.broker_epoch = self_epoch.value();
  protocol::AlterPartitionRequest::TopicData t;
  t.topic_id = topic_id;
  protocol::AlterPartitionRequest::PartitionData p;
  p.partition_index = partition.value();
  p.leader_epoch = proposal.leader_epoch.value();
  p.partition_epoch = proposal.partition_epoch.value();
  for (const replication::IsrMember& m : proposal.new_isr) {
    p.new_isr.push_back(m.id.value());  // v0-2
    p.new_isr_with_epochs.push_back({m.id.value(), m.broker_epoch.value()});
  }
  t.partitions.push_back(std::move(p));
  req.topics.push_back(std::move(t));
  return req;
}

namespace {
// Partition.handleAlterPartitionError's grouping.
AlterPartitionError partition_error(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOperationNotAttempted: return AlterPartitionError::kOperationNotAttempted;
    case ErrorCode::kIneligibleReplica: return AlterPartitionError::kIneligibleReplica;
    case ErrorCode::kUnknownTopicOrPartition: return AlterPartitionError::kUnknownTopicOrPartition;
    case ErrorCode::kUnknownTopicId: return AlterPartitionError::kUnknownTopicId;
    case ErrorCode::kFencedLeaderEpoch: return AlterPartitionError::kFencedLeaderEpoch;
    case ErrorCode::kInvalidUpdateVersion: return AlterPartitionError::kInvalidUpdateVersion;
    case ErrorCode::kInvalidRequest: return AlterPartitionError::kInvalidRequest;
    case ErrorCode::kNewLeaderElected: return AlterPartitionError::kNewLeaderElected;
    default: return AlterPartitionError::kRetriable;  // NOT_CONTROLLER and the like
  }
}
}  // namespace

AlterPartitionAnswer from_alter_partition_response(const Result<protocol::AlterPartitionResponse>& response,
                                                   const Uuid& topic_id, PartitionId partition) {
  // No answer, or a whole-request error (NOT_CONTROLLER, STALE_BROKER_EPOCH
  // while our registration is on its way): AlterPartitionManager retries.
  if (!response.ok() || response->error_code != 0) return AlterPartitionError::kRetriable;
  for (const auto& t : response->topics) {
    if (t.topic_id != topic_id) continue;
    for (const auto& p : t.partitions) {
      if (p.partition_index != partition.value()) continue;
      if (p.error_code != 0) return partition_error(ErrorCode(p.error_code));
      replication::AlterPartitionResult result;
      result.leader_epoch = LeaderEpoch(p.leader_epoch);
      result.partition_epoch = PartitionEpoch(p.partition_epoch);
      for (int32_t id : p.isr) result.isr.push_back(NodeId(id));
      return result;
    }
  }
  return AlterPartitionError::kRetriable;  // the controller left our partition out
}

}  // namespace samsa

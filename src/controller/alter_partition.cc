// AlterPartition on the controller (Kafka 3.9 ReplicationControlManager).
#include "controller/alter_partition.h"

#include <algorithm>
#include <optional>

#include "base/log.h"
#include "protocol/error_code.h"

namespace samsa {
namespace {

using protocol::AlterPartitionRequest;
using protocol::AlterPartitionResponse;
using protocol::ErrorCode;

constexpr int16_t kFirstTopicIdVersion = 2;
constexpr int16_t kFirstIneligibleReplicaVersion = 2;
constexpr int16_t kFirstBrokerEpochsVersion = 3;
constexpr int8_t kRecovering = 1;

struct Member {
  NodeId id;
  BrokerEpoch epoch;
};

// NewIsr (v0-2) or NewIsrWithEpochs (v3+).
std::vector<Member> new_isr(const AlterPartitionRequest::PartitionData& p, int16_t version) {
  std::vector<Member> out;
  if (version >= kFirstBrokerEpochsVersion) {
    for (const auto& m : p.new_isr_with_epochs) out.push_back({NodeId(m.broker_id), BrokerEpoch(m.broker_epoch)});
  } else {
    for (int32_t id : p.new_isr) out.push_back({NodeId(id), kNoBrokerEpoch});
  }
  return out;
}

bool holds(const std::vector<NodeId>& ids, NodeId id) { return std::find(ids.begin(), ids.end(), id) != ids.end(); }

// ineligibleReplicasForIsr: every member must be registered and active,
// and (KIP-903) carry its registration's epoch unless it sent -1.
bool all_eligible(const MetadataImage& image, const std::vector<Member>& isr) {
  for (const Member& m : isr) {
    const BrokerState* b = image.broker(m.id);
    if (!b || !b->active()) return false;
    if (m.epoch != kNoBrokerEpoch && m.epoch != b->epoch) return false;
  }
  return true;
}

// validateAlterPartitionData, in Kafka's order.
ErrorCode validate(const MetadataImage& image, NodeId sender, const PartitionState& current,
                   const AlterPartitionRequest::PartitionData& p, const std::vector<Member>& isr, int16_t version) {
  if (p.leader_epoch > current.leader_epoch.value() || p.partition_epoch > current.partition_epoch) {
    return ErrorCode::kNotController;  // we are behind the leader's metadata
  }
  if (p.leader_epoch < current.leader_epoch.value()) return ErrorCode::kFencedLeaderEpoch;
  if (sender != current.leader) return ErrorCode::kInvalidRequest;
  if (p.partition_epoch < current.partition_epoch) return ErrorCode::kInvalidUpdateVersion;
  bool has_leader = false;
  for (const Member& m : isr) {
    if (!holds(current.replicas, m.id)) return ErrorCode::kInvalidRequest;
    has_leader = has_leader || m.id == current.leader;
  }
  if (!has_leader) return ErrorCode::kInvalidRequest;
  if (p.leader_recovery_state == kRecovering && isr.size() > 1) return ErrorCode::kInvalidRequest;
  if (p.leader_recovery_state < 0 || p.leader_recovery_state > kRecovering) return ErrorCode::kInvalidRequest;
  if (!all_eligible(image, isr)) {
    return version >= kFirstIneligibleReplicaVersion ? ErrorCode::kIneligibleReplica
                                                     : ErrorCode::kOperationNotAttempted;
  }
  return ErrorCode::kNone;
}

AlterPartitionResponse::PartitionResult failed(int32_t index, ErrorCode code) {
  AlterPartitionResponse::PartitionResult out;
  out.partition_index = index;
  out.error_code = int16_t(code);
  return out;
}

AlterPartitionResponse::PartitionResult answer(int32_t index, const PartitionState& state) {
  AlterPartitionResponse::PartitionResult out;
  out.partition_index = index;
  out.leader_id = state.leader.value();
  out.leader_epoch = state.leader_epoch.value();
  for (NodeId id : state.isr) out.isr.push_back(id.value());
  out.partition_epoch = state.partition_epoch;
  return out;
}

}  // namespace

AlterPartitionPlan plan_alter_partition(const MetadataImage& image, const AlterPartitionRequest& request,
                                        int16_t version, const ElectionPolicy& policy) {
  AlterPartitionPlan plan;
  const NodeId sender(request.broker_id);
  const BrokerState* registered = image.broker(sender);
  if (!registered || registered->epoch != BrokerEpoch(request.broker_epoch)) {
    plan.response.error_code = int16_t(ErrorCode::kStaleBrokerEpoch);
    return plan;
  }
  for (const auto& t : request.topics) {
    AlterPartitionResponse::TopicResult out;
    out.topic_name = t.topic_name;
    out.topic_id = t.topic_id;
    const TopicState* topic = version >= kFirstTopicIdVersion ? image.topic_by_id(t.topic_id) : image.topic(t.topic_name);
    for (const auto& p : t.partitions) {
      if (!topic) {
        out.partitions.push_back(failed(p.partition_index, version >= kFirstTopicIdVersion
                                                               ? ErrorCode::kUnknownTopicId
                                                               : ErrorCode::kUnknownTopicOrPartition));
        continue;
      }
      if (p.partition_index < 0 || size_t(p.partition_index) >= topic->partitions.size()) {
        out.partitions.push_back(failed(p.partition_index, ErrorCode::kUnknownTopicOrPartition));
        continue;
      }
      const PartitionState& current = topic->partitions[size_t(p.partition_index)];
      std::vector<Member> isr = new_isr(p, version);
      ErrorCode error = validate(image, sender, current, p, isr, version);
      if (error != ErrorCode::kNone) {
        LOG_INFO("controller", "AlterPartition of {}-{} from broker {} refused: {}", topic->name, p.partition_index,
                 sender.value(), protocol::error_name(error));
        out.partitions.push_back(failed(p.partition_index, error));
        continue;
      }
      std::vector<NodeId> ids;
      for (const Member& m : isr) ids.push_back(m.id);
      if (ids == current.isr) {
        out.partitions.push_back(answer(p.partition_index, current));  // nothing changes
        continue;
      }
      PartitionChangeRecord change;
      change.topic_id = topic->id;
      change.partition = current.partition;
      change.isr = ids;
      // KIP-966: who leaves the ISR below min ISR stays an eligible leader.
      EligibleLeaders eligible = eligible_leaders_after(current, ids, partition_rules(*topic, policy));
      if (eligible.elr != current.elr) change.elr = eligible.elr;
      // It has a leader (the sender): no last known leader any more.
      eligible.last_known_elr.clear();
      if (eligible.last_known_elr != current.last_known_elr) change.last_known_elr = eligible.last_known_elr;
      plan.records.push_back(change);
      PartitionState next = current;
      next.isr = ids;
      next.elr = eligible.elr;
      next.last_known_elr = eligible.last_known_elr;
      next.partition_epoch += 1;
      out.partitions.push_back(answer(p.partition_index, next));
    }
    plan.response.topics.push_back(std::move(out));
  }
  return plan;
}

}  // namespace samsa

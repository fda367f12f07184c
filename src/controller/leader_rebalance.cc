// ElectLeaders and the preferred-leader rebalance (Kafka 3.9
// ReplicationControlManager.electLeader, QuorumController's
// maybeScheduleNextBalancePartitionLeaders).
#include "controller/leader_rebalance.h"

#include <algorithm>
#include <map>

#include "base/log.h"
#include "controller/leader_election.h"

namespace samsa {
namespace {

using protocol::ErrorCode;

bool has_preferred_leader(const PartitionState& p) { return !p.replicas.empty() && p.leader == p.replicas.front(); }

// One partition's election against `image` (records already planned in this
// request applied), appending its record when there is one.
PartitionElectionResult elect_one(const MetadataImage& image, ElectionType type, const std::string& topic_name,
                                  int32_t partition, const ElectionPolicy& policy,
                                  std::vector<MetadataRecord>& records) {
  PartitionElectionResult result{topic_name, partition, ErrorCode::kNone, std::nullopt};
  const TopicState* topic = image.topic(topic_name);
  if (!topic || partition < 0 || size_t(partition) >= topic->partitions.size()) {
    result.error = ErrorCode::kUnknownTopicOrPartition;
    result.message = "The partition does not exist.";
    return result;
  }
  const PartitionState& p = topic->partitions[size_t(partition)];
  if (type == ElectionType::kPreferred ? has_preferred_leader(p) : p.leader != kNoNode) {
    result.error = ErrorCode::kElectionNotNeeded;
    result.message = "Leader election not needed for topic partition.";
    return result;
  }
  auto acceptable = [&](NodeId id) { return image.broker_active(id); };
  PartitionRules rules = partition_rules(*topic, policy);
  rules.election = type == ElectionType::kPreferred ? Election::kPreferred : Election::kUnclean;
  std::optional<PartitionChangeRecord> change = build_partition_change(topic->id, p, p.isr, rules, acceptable);
  const bool elected = change && change->leader != PartitionChangeRecord::kNoLeaderChange && change->leader != kNoNode &&
                       (type == ElectionType::kUnclean || change->leader == p.replicas.front());
  if (!elected) {
    result.error = type == ElectionType::kPreferred ? ErrorCode::kPreferredLeaderNotAvailable
                                                    : ErrorCode::kEligibleLeadersNotAvailable;
    result.message = type == ElectionType::kPreferred
                         ? "The preferred leader is not in the ISR or not available."
                         : "No replica of the partition is available to lead.";
    return result;
  }
  if (change->leader_recovery_state == 1) {
    LOG_WARN("controller", "{}-{}: unclean leader election asked for: broker {} leads from outside the ISR; records "
             "only the old ISR held are lost", topic_name, partition, change->leader.value());
  }
  records.push_back(*change);
  return result;
}

}  // namespace

ElectionPlan plan_elections(const MetadataImage& image, ElectionType type,
                            const std::optional<std::vector<ElectionRequestTopic>>& partitions,
                            const ElectionPolicy& policy) {
  ElectionPlan plan;
  if (partitions) {
    // A partition named twice is elected once: the second sees the first's record.
    MetadataImage after = image;
    for (const auto& t : *partitions) {
      for (int32_t id : t.partitions) {
        size_t before = plan.records.size();
        plan.results.push_back(elect_one(after, type, t.topic, id, policy, plan.records));
        if (plan.records.size() > before) after.apply(plan.records.back());
      }
    }
    return plan;
  }
  for (const auto& [name, topic] : image.topics()) {
    for (const PartitionState& p : topic.partitions) {
      PartitionElectionResult r = elect_one(image, type, name, p.partition.value(), policy, plan.records);
      if (r.error != ErrorCode::kElectionNotNeeded) plan.results.push_back(std::move(r));
    }
  }
  return plan;
}

std::vector<ElectionRequestTopic> partitions_to_rebalance(const MetadataImage& image, int imbalance_percentage) {
  struct Share {
    int preferred = 0;                    // partitions this broker is the preferred replica of
    std::vector<std::pair<std::string, int32_t>> movable;  // of those, led by another, it in the ISR and active
    int not_leading = 0;
  };
  std::map<NodeId, Share> shares;
  for (const auto& [name, topic] : image.topics()) {
    for (const PartitionState& p : topic.partitions) {
      if (p.replicas.empty()) continue;
      NodeId preferred = p.replicas.front();
      Share& share = shares[preferred];
      ++share.preferred;
      if (p.leader == preferred) continue;
      ++share.not_leading;
      if (image.broker_active(preferred) && std::find(p.isr.begin(), p.isr.end(), preferred) != p.isr.end()) {
        share.movable.emplace_back(name, p.partition.value());
      }
    }
  }
  std::map<std::string, std::vector<int32_t>> chosen;
  for (const auto& [broker, share] : shares) {
    if (share.movable.empty() || share.not_leading * 100 <= imbalance_percentage * share.preferred) continue;
    for (const auto& [name, partition] : share.movable) chosen[name].push_back(partition);
  }
  std::vector<ElectionRequestTopic> out;
  for (auto& [name, ids] : chosen) out.push_back(ElectionRequestTopic{name, std::move(ids)});
  return out;
}

}  // namespace samsa

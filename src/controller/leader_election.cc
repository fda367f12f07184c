// Elections on the controller (Kafka 3.9 PartitionChangeBuilder,
// ReplicationControlManager.generateLeaderAndIsrUpdates).
#include "controller/leader_election.h"

#include <algorithm>
#include <set>

#include "base/assert.h"
#include "base/log.h"

namespace samsa {
namespace {

bool holds(const std::vector<NodeId>& ids, NodeId id) { return std::find(ids.begin(), ids.end(), id) != ids.end(); }

struct ElectionResult {
  NodeId leader = kNoNode;
  bool unclean = false;
};

// electAnyLeader.
ElectionResult elect(const PartitionState& p, const std::vector<NodeId>& target_isr, Election election,
                     const std::function<bool(NodeId)>& acceptable) {
  auto valid = [&](NodeId id) { return holds(target_isr, id) && acceptable(id); };
  if (election == Election::kPreferred && !p.replicas.empty() && valid(p.replicas.front())) {
    return {p.replicas.front(), false};
  }
  if (p.leader != kNoNode && valid(p.leader)) return {p.leader, false};
  for (NodeId id : p.replicas) {
    if (valid(id)) return {id, false};
  }
  if (election == Election::kUnclean) {
    for (NodeId id : p.replicas) {
      if (acceptable(id)) return {id, true};
    }
  }
  return {kNoNode, false};
}

std::string ids_string(const std::vector<NodeId>& ids) {
  std::string out;
  for (NodeId id : ids) out += (out.empty() ? "" : ",") + std::to_string(id.value());
  return "[" + out + "]";
}

}  // namespace

std::optional<PartitionChangeRecord> build_partition_change(const Uuid& topic_id, const PartitionState& partition,
                                                            const std::vector<NodeId>& target_isr, Election election,
                                                            const std::function<bool(NodeId)>& acceptable_leader) {
  for (NodeId id : target_isr) ASSERT_MSG(holds(partition.replicas, id), "a target ISR within the replicas");
  PartitionChangeRecord record;
  record.topic_id = topic_id;
  record.partition = partition.partition;
  ElectionResult elected = elect(partition, target_isr, election, acceptable_leader);
  if (elected.leader != partition.leader) {
    record.leader = elected.leader;
    if (elected.unclean) {
      // The only replica that can lead is outside the ISR: it becomes the
      // whole ISR, recovering (KIP-704). Records only the old ISR held are lost.
      record.isr = std::vector<NodeId>{elected.leader};
      record.leader_recovery_state = 1;
    }
  }
  // Without ELR the ISR is never emptied: the last member stays.
  if (!record.isr && !target_isr.empty() && target_isr != partition.isr) record.isr = target_isr;
  if (record.leader == PartitionChangeRecord::kNoLeaderChange && !record.isr && record.leader_recovery_state < 0) {
    return std::nullopt;
  }
  return record;
}

bool unclean_election_enabled(const TopicState& topic, bool broker_default) {
  auto it = topic.configs.find("unclean.leader.election.enable");
  if (it == topic.configs.end()) return broker_default;
  return it->second == "true" || it->second == "TRUE" || it->second == "True";
}

std::vector<MetadataRecord> plan_leadership_work(const MetadataImage& image, const LeadershipWork& work,
                                                 bool unclean_default) {
  // A departure lists the partitions of work.broker (in_isr, led); an
  // arrival the leaderless ones. Each partition is planned once.
  std::set<PartitionKey> keys(work.in_isr.begin(), work.in_isr.end());
  keys.insert(work.led.begin(), work.led.end());
  keys.insert(work.leaderless.begin(), work.leaderless.end());
  const bool departing = !image.broker_active(work.broker);
  auto acceptable = [&](NodeId id) { return image.broker_active(id); };
  std::vector<MetadataRecord> records;
  for (const PartitionKey& key : keys) {
    const TopicState* topic = image.topic_by_id(key.topic_id);
    if (!topic || key.partition.value() < 0 || size_t(key.partition.value()) >= topic->partitions.size()) continue;
    const PartitionState& p = topic->partitions[size_t(key.partition.value())];
    std::vector<NodeId> target = p.isr;
    if (departing) std::erase(target, work.broker);
    const bool unclean = unclean_election_enabled(*topic, unclean_default);
    std::optional<PartitionChangeRecord> change =
        build_partition_change(topic->id, p, target, unclean ? Election::kUnclean : Election::kOnline, acceptable);
    if (!change) continue;
    if (change->leader_recovery_state == 1) {
      LOG_WARN("controller",
               "{}-{}: unclean leader election: broker {} leads from outside the ISR {}; records only those "
               "replicas held are lost (unclean.leader.election.enable)",
               topic->name, key.partition.value(), change->leader.value(), ids_string(p.isr));
    } else if (change->leader == kNoNode) {
      LOG_WARN("controller", "{}-{}: no replica of the ISR {} can lead: the partition is offline", topic->name,
               key.partition.value(), ids_string(change->isr.value_or(p.isr)));
    }
    records.push_back(*change);
  }
  return records;
}

std::vector<MetadataRecord> plan_leadership_work(const MetadataImage& view,
                                                 const std::vector<MetadataRecord>& decision_records,
                                                 const LeadershipWork& work, bool unclean_default) {
  if (work.empty()) return {};
  MetadataImage after = view;
  for (const MetadataRecord& r : decision_records) after.apply(r);
  return plan_leadership_work(after, work, unclean_default);
}

}  // namespace samsa

// Elections on the controller (Kafka 4.1 PartitionChangeBuilder with ELR,
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

// electAnyLeader / electPreferredLeader: valid is in the target ISR or,
// the ISR being empty, in the target ELR (KIP-966), and acceptable.
ElectionResult elect(const PartitionState& p, const std::vector<NodeId>& target_isr,
                     const std::vector<NodeId>& target_elr, const PartitionRules& rules,
                     const std::function<bool(NodeId)>& acceptable) {
  const Election election = rules.election;
  auto valid = [&](NodeId id) {
    return (holds(target_isr, id) || (target_isr.empty() && holds(target_elr, id))) && acceptable(id);
  };
  if (election == Election::kPreferred && !p.replicas.empty() && valid(p.replicas.front())) {
    return {p.replicas.front(), false};
  }
  if (p.leader != kNoNode && valid(p.leader)) return {p.leader, false};
  for (NodeId id : p.replicas) {
    if (valid(id)) return {id, false};
  }
  // KIP-966's balanced recovery (Kafka's default,
  // useLastKnownLeaderInBalancedRecovery): with ISR and ELR both empty, the
  // last leader (kept in LastKnownELR) may lead again, as an unclean
  // election: it had every committed record unless it lost unflushed ones.
  if (rules.elr_enabled && target_isr.empty() && target_elr.empty() && p.last_known_elr.size() == 1 &&
      acceptable(p.last_known_elr.front())) {
    return {p.last_known_elr.front(), true};
  }
  if (election == Election::kUnclean) {
    for (NodeId id : p.replicas) {
      if (acceptable(id)) return {id, true};
    }
  }
  return {kNoNode, false};
}

int32_t parse_min_isr(const TopicState& topic, int32_t broker_default) {
  auto it = topic.configs.find("min.insync.replicas");
  if (it == topic.configs.end()) return broker_default;
  try {
    return std::max(1, std::stoi(it->second));  // validated when set (topic_rules)
  } catch (const std::exception&) {
    return broker_default;
  }
}

std::string ids_string(const std::vector<NodeId>& ids) {
  std::string out;
  for (NodeId id : ids) out += (out.empty() ? "" : ",") + std::to_string(id.value());
  return "[" + out + "]";
}

}  // namespace

PartitionRules partition_rules(const TopicState& topic, const ElectionPolicy& policy) {
  PartitionRules rules;
  rules.election = unclean_election_enabled(topic, policy.unclean_default) ? Election::kUnclean : Election::kOnline;
  rules.elr_enabled = policy.elr_enabled;
  rules.min_isr = parse_min_isr(topic, policy.min_isr_default);
  return rules;
}

EligibleLeaders eligible_leaders_after(const PartitionState& p, const std::vector<NodeId>& target_isr,
                                       const PartitionRules& rules) {
  EligibleLeaders out;
  // Off, or the ISR is at min ISR again: nobody outside it is needed.
  if (!rules.elr_enabled || int32_t(target_isr.size()) >= rules.min_isr) return out;
  // Who leaves the ISR now joins the ELR: the HW has not advanced since the
  // ISR fell below min ISR, so they hold every committed record. Those
  // already in it stay, unless they rejoin the ISR or lost unflushed
  // records in an unclean shutdown.
  for (NodeId id : p.replicas) {
    if (holds(target_isr, id) || holds(rules.unclean_shutdown, id)) continue;
    if (holds(p.isr, id) || holds(p.elr, id)) out.elr.push_back(id);
  }
  out.last_known_elr = p.last_known_elr;  // the last known leader: build_partition_change
  return out;
}

std::optional<PartitionChangeRecord> build_partition_change(const Uuid& topic_id, const PartitionState& partition,
                                                            const std::vector<NodeId>& target_isr_in,
                                                            const PartitionRules& rules,
                                                            const std::function<bool(NodeId)>& acceptable_leader) {
  for (NodeId id : target_isr_in) ASSERT_MSG(holds(partition.replicas, id), "a target ISR within the replicas");
  std::vector<NodeId> target_isr = target_isr_in;
  EligibleLeaders target = eligible_leaders_after(partition, target_isr, rules);
  PartitionChangeRecord record;
  record.topic_id = topic_id;
  record.partition = partition.partition;
  ElectionResult elected = elect(partition, target_isr, target.elr, rules, acceptable_leader);
  if (elected.leader != partition.leader) {
    record.leader = elected.leader;
    if (holds(target.elr, elected.leader)) {
      // Elected from the ELR (KIP-966): it holds every committed record and
      // becomes the whole ISR; the other ELR members stay eligible.
      target_isr = {elected.leader};
      std::erase(target.elr, elected.leader);
    } else if (elected.unclean) {
      // The only replica that can lead is outside the ISR and the ELR: it
      // becomes the whole ISR, recovering (KIP-704). Records only the old
      // ISR held are lost; the ELR means nothing any more.
      record.isr = std::vector<NodeId>{elected.leader};
      record.leader_recovery_state = 1;
      target = EligibleLeaders{};
    }
  }
  if (target.elr != partition.elr) record.elr = target.elr;
  // With ELR the ISR may become empty (its last member joins the ELR);
  // without it the last member stays.
  if (!record.isr && (!target_isr.empty() || rules.elr_enabled) && target_isr != partition.isr) {
    record.isr = target_isr;
  }
  // Kafka's maybeUpdateLastKnownLeader: the leader the partition had when
  // its ISR first became empty; cleared once it has a leader again.
  const bool now_leaderless_isr = record.isr && record.isr->empty();
  const bool has_leader = record.leader.value() >= 0 ||
                          (partition.leader != kNoNode && record.leader != kNoNode);
  if (rules.elr_enabled && now_leaderless_isr && partition.leader != kNoNode &&
      partition.last_known_elr != std::vector<NodeId>{partition.leader}) {
    record.last_known_elr = std::vector<NodeId>{partition.leader};
  } else if ((has_leader || !rules.elr_enabled) && !partition.last_known_elr.empty()) {
    record.last_known_elr = std::vector<NodeId>{};
  }
  const std::vector<NodeId>& isr_after = record.isr ? *record.isr : partition.isr;
  for (NodeId id : target.elr) {
    ASSERT_MSG(!holds(isr_after, id), "ELR and ISR are disjoint");
    ASSERT_MSG(holds(partition.replicas, id), "ELR within the replicas");
  }
  ASSERT_MSG(target.elr.empty() || int32_t(isr_after.size()) < rules.min_isr, "an ELR only while the ISR is below min ISR");
  if (record.leader == PartitionChangeRecord::kNoLeaderChange && !record.isr && record.leader_recovery_state < 0 &&
      !record.elr && !record.last_known_elr) {
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
                                                 const ElectionPolicy& policy) {
  // A departure lists the partitions of work.broker (in_isr, led); an
  // arrival the leaderless ones. Each partition is planned once.
  std::set<PartitionKey> keys(work.in_isr.begin(), work.in_isr.end());
  keys.insert(work.led.begin(), work.led.end());
  keys.insert(work.leaderless.begin(), work.leaderless.end());
  keys.insert(work.eligible.begin(), work.eligible.end());
  const bool departing = !image.broker_active(work.broker);
  auto acceptable = [&](NodeId id) { return image.broker_active(id); };
  std::vector<MetadataRecord> records;
  for (const PartitionKey& key : keys) {
    const TopicState* topic = image.topic_by_id(key.topic_id);
    if (!topic || key.partition.value() < 0 || size_t(key.partition.value()) >= topic->partitions.size()) continue;
    const PartitionState& p = topic->partitions[size_t(key.partition.value())];
    std::vector<NodeId> target = p.isr;
    if (departing) std::erase(target, work.broker);
    PartitionRules rules = partition_rules(*topic, policy);
    if (work.unclean_shutdown) rules.unclean_shutdown = {work.broker};
    std::optional<PartitionChangeRecord> change = build_partition_change(topic->id, p, target, rules, acceptable);
    if (!change) continue;
    if (change->leader_recovery_state == 1) {
      LOG_WARN("controller",
               "{}-{}: unclean leader election: broker {} leads from outside the ISR {}; records only those "
               "replicas held are lost (unclean.leader.election.enable)",
               topic->name, key.partition.value(), change->leader.value(), ids_string(p.isr));
    } else if (change->leader != PartitionChangeRecord::kNoLeaderChange && holds(p.elr, change->leader)) {
      LOG_INFO("controller", "{}-{}: broker {} leads from the eligible leader replicas {} (KIP-966)", topic->name,
               key.partition.value(), change->leader.value(), ids_string(p.elr));
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
                                                 const LeadershipWork& work, const ElectionPolicy& policy) {
  if (work.empty()) return {};
  MetadataImage after = view;
  for (const MetadataRecord& r : decision_records) after.apply(r);
  return plan_leadership_work(after, work, policy);
}

}  // namespace samsa

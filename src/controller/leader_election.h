#pragma once
// Leader elections and controller-side ISR changes, as Kafka's
// PartitionChangeBuilder (ONLINE and UNCLEAN elections) and
// ReplicationControlManager.generateLeaderAndIsrUpdates do them. Pure: an
// image in, PartitionChangeRecords out.
//
// plan_leadership_work turns ClusterControl's LeadershipWork (a broker
// fenced, in controlled shutdown, unregistered or re-registered as a new
// incarnation: leave every ISR, re-elect what it led; a broker unfenced:
// lead the leaderless partitions it is in the ISR of) into records. It must
// be given the image with the decision's own records applied (the broker's
// registration as it will be), which is how "acceptable leader" is judged:
// registered, unfenced and not in controlled shutdown
// (MetadataImage::broker_active).
//
// The rules (Kafka 4.1, with eligible leader replicas, KIP-966):
// - the departing broker leaves the ISR; with ELR the ISR may become empty,
//   without it its last member stays (the record then leaves the ISR
//   unchanged);
// - ELR (eligible_leaders_after): while the target ISR is below the topic's
//   min.insync.replicas, the members that leave the ISR join the ELR (they
//   hold every committed record: the leader does not advance the HW below
//   min ISR); at or above it the ELR and LastKnownELR are cleared; a broker
//   that restarted after an unclean shutdown leaves the ELR; LastKnownELR
//   holds the leader the partition had when its ISR became empty (Kafka's
//   default balanced recovery), and with ISR and ELR both empty that last
//   leader may lead again (an unclean election: ISR forced to it,
//   RECOVERING), even with unclean.leader.election.enable off;
// - the current leader stays if it is still in the target ISR and
//   acceptable; else the first replica in assignment order that is in the
//   target ISR (or, the ISR being empty, in the ELR) and acceptable; one
//   elected from the ELR becomes the whole ISR and leaves the ELR; else,
//   with unclean.leader.election.enable
//   (the topic's, else the broker default; off by default), the first
//   acceptable replica in assignment order, with the ISR forced to it alone
//   and LeaderRecoveryState RECOVERING (KIP-704), logged at WARN (records
//   the old ISR held may be lost); else no leader (-1): the partition is
//   offline rather than losing acknowledged records;
// - a record that names a leader bumps the leader epoch, every record the
//   partition epoch (MetadataImage::apply); nothing changed, no record.

#include <functional>
#include <optional>
#include <vector>

#include "controller/cluster_control.h"
#include "controller/metadata_image.h"

namespace samsa {

// kOnline: keep a valid leader, else the first valid replica; kUnclean: the
// same, then any acceptable replica outside the ISR; kPreferred: the first
// replica in assignment order if valid, else as kOnline (Kafka's
// electPreferredLeader).
enum class Election { kOnline, kUnclean, kPreferred };

// The broker-level settings elections follow (a topic's own configs win
// where Kafka lets them).
struct ElectionPolicy {
  bool unclean_default = false;  // unclean.leader.election.enable
  int32_t min_isr_default = 1;   // min.insync.replicas
  bool elr_enabled = true;       // eligible.leader.replicas.enable (Kafka 4.1's feature, on by default)
};

// How one partition's change is built.
struct PartitionRules {
  Election election = Election::kOnline;
  bool elr_enabled = true;
  int32_t min_isr = 1;
  std::vector<NodeId> unclean_shutdown;  // brokers back from an unclean shutdown: they leave the ELR
};

// The rules for a partition of `topic` under `policy`.
PartitionRules partition_rules(const TopicState& topic, const ElectionPolicy& policy);

struct EligibleLeaders {
  std::vector<NodeId> elr;
  std::vector<NodeId> last_known_elr;  // as the partition has it (build_partition_change sets it)
};

// PartitionChangeBuilder.maybePopulateTargetElr: the ELR and LastKnownELR
// once the ISR is `target_isr`, in assignment order.
EligibleLeaders eligible_leaders_after(const PartitionState& partition, const std::vector<NodeId>& target_isr,
                                       const PartitionRules& rules);

// PartitionChangeBuilder.build for a target ISR (already without departing
// members): nullopt when nothing changes.
std::optional<PartitionChangeRecord> build_partition_change(const Uuid& topic_id, const PartitionState& partition,
                                                            const std::vector<NodeId>& target_isr,
                                                            const PartitionRules& rules,
                                                            const std::function<bool(NodeId)>& acceptable_leader);

// Whether the topic allows unclean elections: its own
// unclean.leader.election.enable, else `broker_default`.
bool unclean_election_enabled(const TopicState& topic, bool broker_default);

std::vector<MetadataRecord> plan_leadership_work(const MetadataImage& image, const LeadershipWork& work,
                                                 const ElectionPolicy& policy);

// The same, for a decision whose records are not in `view` yet: applies
// them to a copy first.
std::vector<MetadataRecord> plan_leadership_work(const MetadataImage& view,
                                                 const std::vector<MetadataRecord>& decision_records,
                                                 const LeadershipWork& work, const ElectionPolicy& policy);

}  // namespace samsa

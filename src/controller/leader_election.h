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
// The rules (Kafka 3.9, without ELR / KIP-966):
// - the departing broker leaves the ISR, but the ISR never becomes empty:
//   its last member stays (the record then leaves the ISR unchanged);
// - the current leader stays if it is still in the target ISR and
//   acceptable; else the first replica in assignment order that is in the
//   target ISR and acceptable; else, with unclean.leader.election.enable
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

// PartitionChangeBuilder.build for a target ISR (already without departing
// members): nullopt when nothing changes.
std::optional<PartitionChangeRecord> build_partition_change(const Uuid& topic_id, const PartitionState& partition,
                                                            const std::vector<NodeId>& target_isr, Election election,
                                                            const std::function<bool(NodeId)>& acceptable_leader);

// Whether the topic allows unclean elections: its own
// unclean.leader.election.enable, else `broker_default`.
bool unclean_election_enabled(const TopicState& topic, bool broker_default);

std::vector<MetadataRecord> plan_leadership_work(const MetadataImage& image, const LeadershipWork& work,
                                                 bool unclean_default);

// The same, for a decision whose records are not in `view` yet: applies
// them to a copy first.
std::vector<MetadataRecord> plan_leadership_work(const MetadataImage& view,
                                                 const std::vector<MetadataRecord>& decision_records,
                                                 const LeadershipWork& work, bool unclean_default);

}  // namespace samsa

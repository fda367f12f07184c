#pragma once
// The active controller's AlterPartition (API 56): a partition leader's
// request to change its ISR, validated as Kafka's
// ReplicationControlManager.alterPartition / validateAlterPartitionData does
// and turned into PartitionChangeRecords. Pure: the image the controller
// plans against in, records and the answer out; the records are proposed
// and the answer sent once they commit (broker/alter_partition_local.h on
// one node; the controller listener for a quorum).
//
// Per partition, in Kafka's order: unknown topic (UNKNOWN_TOPIC_ID from v2,
// names before) or partition (UNKNOWN_TOPIC_OR_PARTITION); a leader or
// partition epoch above ours: NOT_CONTROLLER (this controller is behind);
// an older leader epoch: FENCED_LEADER_EPOCH; the sender not the leader:
// INVALID_REQUEST; an older partition epoch: INVALID_UPDATE_VERSION; an
// ISR outside the replicas or without the leader: INVALID_REQUEST; a
// RECOVERING state with more than the leader: INVALID_REQUEST; a new ISR
// member not registered, fenced, in controlled shutdown, or with another
// broker epoch than its registration's (KIP-903, v3):
// INELIGIBLE_REPLICA (v2+; OPERATION_NOT_ATTEMPTED before). The whole
// request: a sender whose broker epoch is not its registration's gets
// STALE_BROKER_EPOCH.
//
// Success: a PartitionChangeRecord with the new ISR (the leader epoch stays:
// metadata.version 3.6+, KAFKA-15021), answered with the state it gives —
// the same leader and leader epoch, the ISR, partition epoch + 1. An ISR
// equal to the current one writes nothing and answers the current state.

#include <cstdint>
#include <vector>

#include "controller/leader_election.h"
#include "controller/metadata_image.h"
#include "protocol/generated/alter_partition.h"

namespace samsa {

struct AlterPartitionPlan {
  std::vector<MetadataRecord> records;        // propose these
  protocol::AlterPartitionResponse response;  // answer it once they commit
};

// `policy`: min.insync.replicas and ELR, for the eligible leaders an ISR
// change makes (KIP-966).
AlterPartitionPlan plan_alter_partition(const MetadataImage& image, const protocol::AlterPartitionRequest& request,
                                        int16_t version, const ElectionPolicy& policy);

}  // namespace samsa

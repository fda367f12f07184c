#pragma once
// The AlterPartition channel (replication/alter_partition_channel.h) of a
// broker whose active controller is its own: the single node, and each
// broker of the replication simulation. The request is planned on the
// local Controller (controller/alter_partition.h) and answered when its
// PartitionChangeRecords commit; a controller that is not active answers
// NOT_CONTROLLER for the whole request (the leader retries).
//
// A quorum's broker sends the same request over the network to the active
// controller instead (the broker-to-controller channel): any function with
// AlterPartitionSender's signature plugs into
// ReplicaManager::start_isr_management.

#include "replication/alter_partition_channel.h"

namespace samsa {

class Broker;

// How long a local AlterPartition may take to commit before the leader is
// told REQUEST_TIMED_OUT (and retries).
inline constexpr int64_t kLocalAlterPartitionTimeoutMs = 30000;

AlterPartitionSender local_alter_partition_sender(Broker& broker);

// Plans and proposes one AlterPartition on the broker's Controller; `reply`
// gets the response once the records commit (or the failure).
void serve_alter_partition(Broker& broker, const protocol::AlterPartitionRequest& request, int16_t version,
                           AlterPartitionReply reply);

}  // namespace samsa

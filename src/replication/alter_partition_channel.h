#pragma once
// The leader's way to the active controller for AlterPartition (API 56):
// one function, "send this request and call me back with the answer". The
// broker injects it (broker/alter_partition_local.h: the local Controller
// of a single node or of a simulated broker; the broker-to-controller
// channel of a quorum's broker is another implementation of the same
// function). ReplicaManager sends each partition's pending proposal
// through it (one in flight per partition, replication_core.h) and feeds
// the answer back to the partition's core.
//
// to_alter_partition_request / from_alter_partition_response convert
// between the core's proposal and answer and the wire (Kafka's
// Partition.submitAlterPartition, AlterPartitionManager's error grouping).

#include <functional>
#include <variant>

#include "base/result.h"
#include "model/ids.h"
#include "model/uuid.h"
#include "protocol/generated/alter_partition.h"
#include "replication/replication_types.h"

namespace samsa {

// The version a Kafka 3.9 broker sends (topic ids, broker epochs: KIP-903).
inline constexpr int16_t kAlterPartitionVersion = 3;

using AlterPartitionReply = std::function<void(Result<protocol::AlterPartitionResponse>)>;
// Sends `request` at `version` to the active controller; `reply` is called
// once, on the loop thread, with its answer or the failure to get one.
using AlterPartitionSender =
    std::function<void(const protocol::AlterPartitionRequest& request, int16_t version, AlterPartitionReply reply)>;

using AlterPartitionAnswer = std::variant<replication::AlterPartitionResult, replication::AlterPartitionError>;

protocol::AlterPartitionRequest to_alter_partition_request(NodeId self, BrokerEpoch self_epoch, const Uuid& topic_id,
                                                           PartitionId partition,
                                                           const replication::AlterPartitionProposal& proposal);
// The answer for (topic_id, partition) in a response, or the failure to get
// one (kRetriable: the request is sent again).
AlterPartitionAnswer from_alter_partition_response(const Result<protocol::AlterPartitionResponse>& response,
                                                   const Uuid& topic_id, PartitionId partition);

}  // namespace samsa

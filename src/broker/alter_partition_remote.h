#pragma once
// The AlterPartition channel (replication/alter_partition_channel.h) of a
// quorum's broker: the request goes over the network to the active
// controller's controller listener, found as the lifecycle's requests find
// it (ControllerChannel, its own connection), as Kafka's
// AlterPartitionManager sends through its controller channel. The answer is
// given back as it is; ReplicaManager retries what is retriable
// (NOT_CONTROLLER, no answer). NOT_CONTROLLER, a failed request or no answer
// within controller.quorum.request.timeout.ms (the connection is closed)
// moves on to another controller.
//
// Loop-thread only. The Runtime outlives it; the sender function keeps the
// channel alive, and an answer after the function is gone is dropped.

#include <memory>
#include <vector>

#include "broker/controller_channel.h"
#include "replication/alter_partition_channel.h"

namespace samsa {

struct RemoteAlterPartitionOptions {
  NodeId self;
  std::vector<ControllerAddress> controllers;  // controller.quorum.voters
  int64_t connect_timeout_ms = 10000;          // socket.connection.setup.timeout.ms
  int64_t request_timeout_ms = 2000;           // controller.quorum.request.timeout.ms
};

AlterPartitionSender remote_alter_partition_sender(Runtime& runtime, RemoteAlterPartitionOptions options,
                                                   std::function<NodeId()> leader_hint);

}  // namespace samsa

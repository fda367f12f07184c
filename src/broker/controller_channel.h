#pragma once
// ControllerChannel: a broker's connection to the active controller's
// controller listener, as Kafka's NodeToControllerChannelManager finds it:
// the controller asked is the Raft leader this node knows of (a voter knows
// it from its own quorum), else the voters of controller.quorum.voters in
// turn; a failure (NOT_CONTROLLER, a failed dial, no answer in time) names
// the controller that failed, which is then avoided as a hint and the next
// voter is tried. One connection, kept while it answers.
//
// Used by LifecycleDriver (registration, heartbeats) and the AlterPartition
// channel (broker/alter_partition_remote.h), each with its own connection as
// Kafka's brokers keep one channel per purpose.
//
// Loop-thread only. The Runtime outlives it.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "io/kafka_client.h"
#include "io/runtime.h"
#include "model/ids.h"

namespace samsa {

struct ControllerAddress {
  NodeId id;
  std::string host;
  uint16_t port = 0;
};

class ControllerChannel {
 public:
  // leader_hint: the active controller this node knows of (kNoNode: none).
  ControllerChannel(Runtime& runtime, std::string client_id, std::vector<ControllerAddress> controllers,
                    int64_t connect_timeout_ms, std::function<NodeId()> leader_hint);
  ~ControllerChannel();
  ControllerChannel(const ControllerChannel&) = delete;
  ControllerChannel& operator=(const ControllerChannel&) = delete;

  // The controller to ask now, and the connection to it (dialled if new).
  const ControllerAddress& target();
  KafkaClient& client_for(const ControllerAddress& target);
  // `target` failed (NOT_CONTROLLER, no connection, no answer): its
  // connection is dropped and the next request tries another controller.
  void failed(NodeId target);
  // An answer without error: the hint is trusted again.
  void succeeded() { avoid_ = kNoNode; }
  // Closes the current connection (its requests fail): a request timeout.
  void close();

 private:
  Runtime& runtime_;
  std::string client_id_;
  std::vector<ControllerAddress> controllers_;
  int64_t connect_timeout_ms_;
  std::function<NodeId()> leader_hint_;
  std::unique_ptr<KafkaClient> client_;
  NodeId client_target_ = kNoNode;
  NodeId avoid_ = kNoNode;  // the controller that failed last
  size_t next_voter_ = 0;
};

}  // namespace samsa

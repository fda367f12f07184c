#pragma once
// ProducerIds: this broker's producer ids for InitProducerId (Kafka's
// RPCProducerIdManager): used from a block the active controller handed out
// (AllocateProducerIds, committed as a ProducerIdsRecord before the answer,
// so blocks never overlap, also across failover). The single node asks its
// own controller through the same path; a cluster's node that is not the
// active controller forwards AllocateProducerIds to the one that is.
// While no block is at hand a request waits for the next one; a failed
// allocation answers the waiting requests COORDINATOR_LOAD_IN_PROGRESS
// (retriable, as Kafka's broker answers when its block has not arrived).
//
// Loop-thread only.

#include <cstdint>
#include <deque>
#include <functional>

#include "model/ids.h"
#include "protocol/error_code.h"
#include "protocol/generated/allocate_producer_ids.h"

namespace samsa {

class Broker;

class ProducerIds {
 public:
  static constexpr int32_t kBlockSize = 1000;  // Kafka's ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE
  using Done = std::function<void(protocol::ErrorCode, ProducerId)>;

  explicit ProducerIds(Broker& broker) : broker_(broker) {}
  void next(Done done);

 private:
  void request_block();
  void on_block(const protocol::AllocateProducerIdsResponse& response);

  Broker& broker_;
  int64_t next_ = 0;
  int64_t end_ = 0;  // exclusive
  bool requesting_ = false;
  std::deque<Done> waiting_;
};

// AllocateProducerIds on the active controller: plans a ProducerIdsRecord
// against the controller's view and answers once it commits.
void allocate_producer_ids_on_controller(Broker& broker, const protocol::AllocateProducerIdsRequest& request,
                                         std::function<void(protocol::AllocateProducerIdsResponse)> done);

}  // namespace samsa

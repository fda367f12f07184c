// InitProducerId (22, v0-5) for idempotent producers: a new producer id
// from this broker's block (broker/producer_ids.h) with epoch 0, as Kafka's
// TransactionCoordinator answers a null transactional id (also with v3+'s
// ProducerId/ProducerEpoch set: an idempotent producer's KIP-360 reset gets
// a new id). Transactions are not implemented: a transactional id is
// answered TRANSACTIONAL_ID_AUTHORIZATION_FAILED (fatal to every client), as
// FindCoordinator answers a transaction coordinator lookup
// (docs/decisions/0012).
#include <memory>

#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/producer_ids.h"
#include "broker/request.h"
#include "protocol/generated/init_producer_id.h"

namespace samsa {

void handle_init_producer_id(Broker& broker, Request& request) {
  protocol::InitProducerIdRequest body;
  if (!request.decode(body)) return;
  protocol::InitProducerIdResponse response;
  if (body.transactional_id.has_value()) {
    response.error_code = int16_t(protocol::ErrorCode::kTransactionalIdAuthorizationFailed);
    return request.respond(response);
  }
  auto held = std::make_shared<Request>(std::move(request));
  broker.producer_ids().next([held](protocol::ErrorCode error, ProducerId id) {
    protocol::InitProducerIdResponse answer;
    answer.error_code = int16_t(error);
    answer.producer_id = id.value();
    answer.producer_epoch = error == protocol::ErrorCode::kNone ? 0 : -1;
    held->respond(answer);
  });
}

// AllocateProducerIds (67, v0) from another broker of the cluster: answered
// by the active controller (NOT_CONTROLLER elsewhere).
void handle_allocate_producer_ids(Broker& broker, Request& request) {
  protocol::AllocateProducerIdsRequest body;
  if (!request.decode(body)) return;
  auto held = std::make_shared<Request>(std::move(request));
  allocate_producer_ids_on_controller(
      broker, body, [held](const protocol::AllocateProducerIdsResponse& response) { held->respond(response); });
}

}  // namespace samsa

// UnregisterBroker (64, v0): an administrator removes a broker from the
// cluster for good (KIP-631; `samsa cluster unregister`). A node of a
// multi-node quorum only (the route is absent on the single node, which
// registers itself). A node that is not the active controller forwards it
// (Broker::on_frame, ControllerForwarder::forwards); here the active
// controller answers when the UnregisterBrokerRecord commits, or refuses
// (BROKER_ID_NOT_REGISTERED, INVALID_REQUEST for an active broker,
// NOT_CONTROLLER): controller/cluster_control_service.h.
#include <memory>

#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/request.h"
#include "protocol/generated/unregister_broker.h"

namespace samsa {

void handle_unregister_broker(Broker& broker, Request& request) {
  protocol::UnregisterBrokerRequest body;
  if (!request.decode(body)) return;
  auto held = std::make_shared<Request>(std::move(request));
  broker.unregister_broker(NodeId(body.broker_id),
                           [held](const protocol::UnregisterBrokerResponse& response) { held->respond(response); });
}

}  // namespace samsa

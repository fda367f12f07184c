#include "controller/cluster_control_wire.h"

namespace samsa {

BrokerRegistrationEvent registration_from_wire(const protocol::BrokerRegistrationRequest& request) {
  BrokerRegistrationEvent event{NodeId(request.broker_id), request.cluster_id, request.incarnation_id, {},
                                request.rack};
  for (const auto& l : request.listeners) event.listeners.push_back({l.name, l.host, l.port, l.security_protocol});
  event.previous_broker_epoch = BrokerEpoch(request.previous_broker_epoch);
  return event;
}

BrokerHeartbeatEvent heartbeat_from_wire(const protocol::BrokerHeartbeatRequest& request) {
  return BrokerHeartbeatEvent{NodeId(request.broker_id), BrokerEpoch(request.broker_epoch),
                              Offset(request.current_metadata_offset), request.want_fence, request.want_shut_down};
}

protocol::BrokerRegistrationResponse registration_response(BrokerEpoch epoch) {
  protocol::BrokerRegistrationResponse response;
  response.broker_epoch = epoch.value();
  return response;
}

protocol::BrokerRegistrationResponse registration_response(const LifecycleError& error) {
  protocol::BrokerRegistrationResponse response;
  response.error_code = int16_t(error.code);
  return response;
}

protocol::BrokerHeartbeatResponse heartbeat_response(const HeartbeatDecision& decision) {
  protocol::BrokerHeartbeatResponse response;
  response.is_caught_up = decision.is_caught_up;
  response.is_fenced = decision.is_fenced;
  response.should_shut_down = decision.should_shut_down;
  return response;
}

protocol::BrokerHeartbeatResponse heartbeat_response(const LifecycleError& error) {
  protocol::BrokerHeartbeatResponse response;
  response.error_code = int16_t(error.code);
  return response;
}

protocol::UnregisterBrokerResponse unregister_response(const LifecycleError* error) {
  protocol::UnregisterBrokerResponse response;
  if (error) {
    response.error_code = int16_t(error->code);
    response.error_message = error->message;
  } else {
    response.error_message = std::nullopt;
  }
  return response;
}

}  // namespace samsa

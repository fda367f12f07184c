#pragma once
// The wire side of ClusterControl: BrokerRegistration (62), BrokerHeartbeat
// (63) and UnregisterBroker (64) requests into its events, its decisions
// into their responses. The controller decodes, calls these, plans, and
// answers (on commit when there are records).

#include "controller/cluster_control.h"
#include "protocol/generated/broker_heartbeat.h"
#include "protocol/generated/broker_registration.h"
#include "protocol/generated/unregister_broker.h"

namespace samsa {

BrokerRegistrationEvent registration_from_wire(const protocol::BrokerRegistrationRequest& request);
BrokerHeartbeatEvent heartbeat_from_wire(const protocol::BrokerHeartbeatRequest& request);

protocol::BrokerRegistrationResponse registration_response(BrokerEpoch epoch);
protocol::BrokerRegistrationResponse registration_response(const LifecycleError& error);
protocol::BrokerHeartbeatResponse heartbeat_response(const HeartbeatDecision& decision);
// An error answer keeps the schema's defaults (IsFenced=true), as Kafka's.
protocol::BrokerHeartbeatResponse heartbeat_response(const LifecycleError& error);
// nullptr: done.
protocol::UnregisterBrokerResponse unregister_response(const LifecycleError* error);

}  // namespace samsa

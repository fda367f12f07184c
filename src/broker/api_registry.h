#pragma once
// The one table of the APIs this broker serves: it routes requests and it is
// what ApiVersions advertises, so the broker never advertises an API it does
// not implement. An API missing here gets UNSUPPORTED_VERSION semantics
// (connection closed, like Kafka; ApiVersions answers with error 35).

#include <cstdint>
#include <span>

#include "protocol/generated/apis.h"

namespace samsa {

class Broker;
class Request;

using Handler = void (*)(Broker& broker, Request& request);

struct ApiRoute {
  protocol::ApiKey key;
  int16_t min_version;
  int16_t max_version;
  Handler handle;
  // Answered only when this node runs the controller role (DescribeQuorum:
  // Kafka's brokers forward it to the controller; ours answer it themselves
  // when they are one, and do not list it otherwise).
  bool controller_role = false;
  // Answered only on a node of a multi-node quorum (UnregisterBroker: the
  // single node registers itself and has no ClusterControl).
  bool cluster_only = false;
};

// Every API, by ascending key. Version ranges lie within the protocol's
// defined ranges (checked at startup).
std::span<const ApiRoute> api_routes();
// The route of an API served by a node with (or without) the controller
// role, in a cluster (or not); nullptr if it is not served.
const ApiRoute* find_route(int16_t api_key, bool controller_role, bool cluster = false);

}  // namespace samsa

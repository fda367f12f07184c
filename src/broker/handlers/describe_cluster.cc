// DescribeCluster (v0-1): the cluster id, the controller and the brokers as
// the metadata image knows them. v1 lets a client ask for the controllers'
// endpoints instead (endpoint type 2); a broker answers only for brokers
// (UNSUPPORTED_ENDPOINT_TYPE otherwise), as Kafka's brokers do. Without an
// authorizer every cluster operation is allowed, so the authorized
// operations (when asked for) are all those Kafka defines for CLUSTER
// (broker/authorized_operations.h).
#include "broker/authorized_operations.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/request.h"
#include "protocol/error_code.h"
#include "protocol/generated/describe_cluster.h"

namespace samsa {
namespace {

using protocol::DescribeClusterRequest;
using protocol::DescribeClusterResponse;
using protocol::ErrorCode;

constexpr int8_t kBrokerEndpoints = 1;

}  // namespace

void handle_describe_cluster(Broker& broker, Request& request) {
  DescribeClusterRequest body;
  if (!request.decode(body)) return;

  DescribeClusterResponse response;
  response.endpoint_type = body.endpoint_type;
  if (request.version() >= 1 && body.endpoint_type != kBrokerEndpoints) {
    response.error_code = int16_t(ErrorCode::kUnsupportedEndpointType);
    response.error_message = "The broker does not support endpoint type " + std::to_string(body.endpoint_type);
    request.respond(response);
    return;
  }
  response.cluster_id = broker.cluster_id();
  response.controller_id = broker.controller_id().value();
  for (const auto& [id, b] : broker.image().brokers()) {
    if (b.fenced) continue;  // Kafka lists the alive brokers only (v2's IncludeFencedBrokers is 4.0's)
    DescribeClusterResponse::DescribeClusterBroker out;
    out.broker_id = id.value();
    out.host = b.host;
    out.port = b.port;
    out.rack = b.rack;
    response.brokers.push_back(std::move(out));
  }
  if (body.include_cluster_authorized_operations) response.cluster_authorized_operations = kClusterOperations;
  request.respond(response);
}

}  // namespace samsa

#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/request.h"
#include "protocol/generated/api_versions.h"

namespace samsa {

void handle_api_versions(Broker& broker, Request& request) {
  protocol::ApiVersionsRequest body;
  if (!request.decode(body)) return;
  protocol::ApiVersionsResponse response;
  fill_api_versions(response, broker.routes_controller_apis(), broker.in_cluster());
  request.respond(response);
}

}  // namespace samsa

// DescribeQuorum (55) on the broker listener of a node with the controller
// role (the route is absent otherwise): the same answer as on the
// controller listener (controller/controller_apis.cc).
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/request.h"
#include "protocol/generated/describe_quorum.h"

namespace samsa {

void handle_describe_quorum(Broker& broker, Request& request) {
  protocol::DescribeQuorumRequest body;
  if (!request.decode(body)) return;
  request.respond(answer_describe_quorum(body, broker.quorum()->describe_quorum()));
}

}  // namespace samsa

// DescribeQuorum (55) on the broker listener of a node with the controller
// role: the same answer as on the controller listener
// (controller/controller_apis.cc). A broker-only node forwards it to the
// active controller (Broker::on_frame); here only when that failed:
// NOT_CONTROLLER, retriable.
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/request.h"
#include "protocol/generated/describe_quorum.h"

namespace samsa {

void handle_describe_quorum(Broker& broker, Request& request) {
  protocol::DescribeQuorumRequest body;
  if (!request.decode(body)) return;
  if (broker.quorum() == nullptr) {
    protocol::DescribeQuorumResponse response;
    response.error_code = int16_t(protocol::ErrorCode::kNotController);
    response.error_message = "no active controller could be reached to forward DescribeQuorum to";
    return request.respond(response);
  }
  request.respond(answer_describe_quorum(body, broker.quorum()->describe_quorum()));
}

}  // namespace samsa

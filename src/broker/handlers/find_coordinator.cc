// FindCoordinator: the broker leading the group's __consumer_offsets
// partition (v0-3: one key; v4+: a batch of keys). Transaction coordinators
// are not served yet: key type 1 gets COORDINATOR_NOT_AVAILABLE.
#include "broker/handlers/group_common.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_code.h"
#include "protocol/generated/find_coordinator.h"

namespace samsa {
namespace {

using protocol::ErrorCode;
using protocol::FindCoordinatorRequest;
using protocol::FindCoordinatorResponse;

constexpr int8_t kGroupKeyType = 0;

FindCoordinatorResponse::Coordinator locate(Broker& broker, const std::string& key, int8_t key_type) {
  FindCoordinatorResponse::Coordinator out;
  out.key = key;
  out.node_id = -1;
  out.port = -1;
  ErrorCode error = key_type == kGroupKeyType ? ErrorCode::kNone : ErrorCode::kCoordinatorNotAvailable;
  int32_t node = error == ErrorCode::kNone ? broker.groups().coordinator_node(key) : -1;
  const BrokerState* state = node >= 0 ? broker.image().broker(NodeId(node)) : nullptr;
  if (!state) error = ErrorCode::kCoordinatorNotAvailable;
  if (error != ErrorCode::kNone) {
    out.error_code = int16_t(error);
    out.error_message = std::string(protocol::error_name(error));
    return out;
  }
  out.node_id = node;
  out.host = state->host;
  out.port = state->port;
  out.error_code = 0;
  out.error_message = std::nullopt;
  return out;
}

}  // namespace

void handle_find_coordinator(Broker& broker, Request& request) {
  FindCoordinatorRequest body;
  if (!request.decode(body)) return;
  FindCoordinatorResponse response;
  if (request.version() >= 4) {
    for (const auto& key : body.coordinator_keys) response.coordinators.push_back(locate(broker, key, body.key_type));
  } else {
    auto c = locate(broker, body.key, body.key_type);
    response.error_code = c.error_code;
    response.error_message = c.error_message;
    response.node_id = c.node_id;
    response.host = c.host;
    response.port = c.port;
  }
  request.respond(response);
}

}  // namespace samsa

// FindCoordinator: the broker leading the group's __consumer_offsets
// partition (v0-3: one key; v4+: a batch of keys). Transaction coordinators
// are not served yet: key type 1 gets TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
// the one answer every client (librdkafka included) treats as fatal for a
// transaction coordinator lookup, so a transactional client fails at once
// instead of retrying for its whole timeout; any other type gets
// INVALID_REQUEST (docs/decisions/0012-no-transaction-coordinator.md).
#include <string_view>

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
constexpr int8_t kTransactionKeyType = 1;
constexpr std::string_view kNoTransactionsMessage =
    "Transactions are not supported by this broker: no transaction coordinator";

FindCoordinatorResponse::Coordinator locate(Broker& broker, const std::string& key, int8_t key_type) {
  FindCoordinatorResponse::Coordinator out;
  out.key = key;
  out.node_id = -1;
  out.port = -1;
  if (key_type == kTransactionKeyType) {
    out.error_code = int16_t(ErrorCode::kTransactionalIdAuthorizationFailed);
    out.error_message = std::string(kNoTransactionsMessage);
    return out;
  }
  if (key_type != kGroupKeyType) {
    out.error_code = int16_t(ErrorCode::kInvalidRequest);
    out.error_message = "Unsupported coordinator type " + std::to_string(key_type);
    return out;
  }
  ErrorCode error = ErrorCode::kNone;
  int32_t node = broker.groups().coordinator_node(key);
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

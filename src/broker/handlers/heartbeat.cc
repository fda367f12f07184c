// Heartbeat: keeps a member's session alive; tells it when to rejoin.
#include "broker/handlers/group_common.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_code.h"
#include "protocol/generated/heartbeat.h"

namespace samsa {

void handle_heartbeat(Broker& broker, Request& request) {
  protocol::HeartbeatRequest body;
  if (!request.decode(body)) return;
  protocol::HeartbeatResponse response;
  protocol::ErrorCode error = body.group_id.empty() ? protocol::ErrorCode::kInvalidGroupId
                                                    : broker.groups().check_coordinator(body.group_id);
  if (error == protocol::ErrorCode::kNone) {
    error = broker.groups().coordinator().heartbeat(body.group_id, body.member_id, body.group_instance_id,
                                                    body.generation_id, broker.groups().now_ms());
  }
  response.error_code = int16_t(error);
  request.respond(response);
}

}  // namespace samsa

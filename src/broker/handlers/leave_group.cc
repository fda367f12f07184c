// LeaveGroup: v0-2 one member id; v3+ a batch of members (KIP-345), each
// with its own error.
#include "broker/handlers/group_common.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_code.h"
#include "protocol/generated/leave_group.h"

namespace samsa {

void handle_leave_group(Broker& broker, Request& request) {
  protocol::LeaveGroupRequest body;
  if (!request.decode(body)) return;
  bool batched = request.version() >= 3;
  std::vector<group::MemberRef> members;
  if (batched) {
    for (const auto& m : body.members) members.push_back({m.member_id, m.group_instance_id});
  } else {
    members.push_back({body.member_id, std::nullopt});
  }
  protocol::LeaveGroupResponse response;
  protocol::ErrorCode error = body.group_id.empty() ? protocol::ErrorCode::kInvalidGroupId
                                                    : broker.groups().check_coordinator(body.group_id);
  group::LeaveResult result;
  if (error == protocol::ErrorCode::kNone) {
    result = broker.groups().coordinator().leave(body.group_id, members, broker.groups().now_ms());
    error = result.error;
  }
  response.error_code = int16_t(error);
  if (batched) {
    if (error == protocol::ErrorCode::kNone) {
      for (size_t i = 0; i < members.size(); ++i) {
        protocol::LeaveGroupResponse::MemberResponse m;
        m.member_id = members[i].member_id;
        m.group_instance_id = members[i].group_instance_id;
        m.error_code = int16_t(result.members[i]);
        response.members.push_back(std::move(m));
      }
    }
  } else if (error == protocol::ErrorCode::kNone && !result.members.empty()) {
    response.error_code = int16_t(result.members[0]);
  }
  request.respond(response);
}

}  // namespace samsa

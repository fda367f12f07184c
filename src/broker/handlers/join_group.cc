// JoinGroup: parks until the rebalance's join phase completes (the
// coordinator calls back), so the Request is kept alive in a shared_ptr.
// v4+ dynamic members get MEMBER_ID_REQUIRED first (KIP-394).
#include <memory>

#include "broker/handlers/group_common.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_code.h"
#include "protocol/generated/join_group.h"

namespace samsa {
namespace {

using protocol::ErrorCode;
using protocol::JoinGroupRequest;
using protocol::JoinGroupResponse;

constexpr int16_t kFirstKnownMemberIdVersion = 4;

JoinGroupResponse to_response(const group::JoinResult& r) {
  JoinGroupResponse out;
  out.error_code = int16_t(r.error);
  out.generation_id = r.generation;
  out.protocol_type = r.protocol_type;
  out.protocol_name = r.protocol_name;
  out.leader = r.leader;
  out.skip_assignment = r.skip_assignment;
  out.member_id = r.member_id;
  for (const auto& m : r.members) {
    JoinGroupResponse::JoinGroupResponseMember member;
    member.member_id = m.member_id;
    member.group_instance_id = m.group_instance_id;
    member.metadata = m.metadata;
    out.members.push_back(std::move(member));
  }
  return out;
}

}  // namespace

void handle_join_group(Broker& broker, Request& request) {
  JoinGroupRequest body;
  if (!request.decode(body)) return;
  group::JoinResult failed;
  failed.member_id = body.member_id;
  failed.error = body.group_id.empty() ? ErrorCode::kInvalidGroupId : broker.groups().check_coordinator(body.group_id);
  if (failed.error != ErrorCode::kNone) {
    request.respond(to_response(failed));
    return;
  }
  group::JoinRequest r;
  r.group_id = body.group_id;
  r.member_id = body.member_id;
  r.group_instance_id = body.group_instance_id;
  r.client_id = request.client_id();
  r.client_host = client_host_of(request);
  r.session_timeout_ms = body.session_timeout_ms;
  r.rebalance_timeout_ms = body.rebalance_timeout_ms;
  r.protocol_type = body.protocol_type;
  for (auto& p : body.protocols) r.protocols.emplace_back(p.name, std::move(p.metadata));
  r.require_known_member_id = request.version() >= kFirstKnownMemberIdVersion && !body.group_instance_id;
  auto parked = std::make_shared<Request>(std::move(request));
  broker.groups().coordinator().join(r, broker.groups().now_ms(),
                                     [parked](const group::JoinResult& result) { parked->respond(to_response(result)); });
}

}  // namespace samsa

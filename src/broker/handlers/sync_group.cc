// SyncGroup: followers park until the leader's assignment is stored; the
// coordinator answers through the callback.
#include <memory>

#include "broker/handlers/group_common.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_code.h"
#include "protocol/generated/sync_group.h"

namespace samsa {
namespace {

using protocol::ErrorCode;
using protocol::SyncGroupRequest;
using protocol::SyncGroupResponse;

SyncGroupResponse to_response(const group::SyncResult& r) {
  SyncGroupResponse out;
  out.error_code = int16_t(r.error);
  out.protocol_type = r.protocol_type;
  out.protocol_name = r.protocol_name;
  out.assignment = r.assignment;
  return out;
}

}  // namespace

void handle_sync_group(Broker& broker, Request& request) {
  SyncGroupRequest body;
  if (!request.decode(body)) return;
  group::SyncResult failed;
  failed.error = body.group_id.empty() ? ErrorCode::kInvalidGroupId : broker.groups().check_coordinator(body.group_id);
  if (failed.error != ErrorCode::kNone) {
    request.respond(to_response(failed));
    return;
  }
  group::SyncRequest r;
  r.group_id = body.group_id;
  r.generation = body.generation_id;
  r.member_id = body.member_id;
  r.group_instance_id = body.group_instance_id;
  r.protocol_type = body.protocol_type;
  r.protocol_name = body.protocol_name;
  for (auto& a : body.assignments) r.assignments[a.member_id] = std::move(a.assignment);
  auto parked = std::make_shared<Request>(std::move(request));
  broker.groups().coordinator().sync(r, broker.groups().now_ms(),
                                     [parked](const group::SyncResult& result) { parked->respond(to_response(result)); });
}

}  // namespace samsa

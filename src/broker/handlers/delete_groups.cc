// DeleteGroups: removes Empty groups and their offsets (tombstones);
// others get NON_EMPTY_GROUP or GROUP_ID_NOT_FOUND.
#include "broker/handlers/group_common.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_code.h"
#include "protocol/generated/delete_groups.h"

namespace samsa {

void handle_delete_groups(Broker& broker, Request& request) {
  protocol::DeleteGroupsRequest body;
  if (!request.decode(body)) return;
  protocol::DeleteGroupsResponse response;
  for (const auto& id : body.groups_names) {
    protocol::ErrorCode error = broker.groups().check_coordinator(id);
    if (error == protocol::ErrorCode::kNone) error = broker.groups().coordinator().delete_group(id);
    protocol::DeleteGroupsResponse::DeletableGroupResult result;
    result.group_id = id;
    result.error_code = int16_t(error);
    response.results.push_back(std::move(result));
  }
  request.respond(response);
}

}  // namespace samsa

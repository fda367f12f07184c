// ListGroups: every group this broker coordinates, optionally filtered by
// state (v4+, case-insensitive as Kafka) and type (v5+: "classic" only).
#include <algorithm>

#include "broker/handlers/group_common.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_code.h"
#include "protocol/generated/list_groups.h"

namespace samsa {
namespace {

bool iequals(const std::string& a, const std::string& b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return std::tolower(x) == std::tolower(y); });
}

bool matches(const std::vector<std::string>& filter, const std::string& value) {
  if (filter.empty()) return true;
  return std::any_of(filter.begin(), filter.end(), [&](const std::string& f) { return iequals(f, value); });
}

}  // namespace

void handle_list_groups(Broker& broker, Request& request) {
  protocol::ListGroupsRequest body;
  if (!request.decode(body)) return;
  protocol::ListGroupsResponse response;
  for (const auto& [id, g] : broker.groups().coordinator().groups()) {
    if (broker.groups().check_coordinator(id) != protocol::ErrorCode::kNone) continue;
    std::string state = group::state_name(g.state);
    if (!matches(body.states_filter, state) || !matches(body.types_filter, "classic")) continue;
    protocol::ListGroupsResponse::ListedGroup listed;
    listed.group_id = id;
    listed.protocol_type = g.protocol_type.value_or("");
    listed.group_state = state;
    listed.group_type = "classic";
    response.groups.push_back(std::move(listed));
  }
  request.respond(response);
}

}  // namespace samsa

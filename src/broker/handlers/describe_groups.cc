// DescribeGroups: state, protocol and members (with metadata and
// assignment bytes) of each group, and the operations allowed on it when
// asked (broker/authorized_operations.h). An unknown group is described as Dead
// with no error, as Kafka does.
#include "broker/authorized_operations.h"
#include "broker/handlers/group_common.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_code.h"
#include "protocol/generated/describe_groups.h"

namespace samsa {
namespace {

using protocol::DescribeGroupsResponse;

DescribeGroupsResponse::DescribedGroup describe(Broker& broker, const std::string& group_id) {
  DescribeGroupsResponse::DescribedGroup out;
  out.group_id = group_id;
  protocol::ErrorCode error = broker.groups().check_coordinator(group_id);
  out.error_code = int16_t(error);
  out.group_state = "Dead";
  if (error != protocol::ErrorCode::kNone) return out;
  const group::Group* g = broker.groups().coordinator().find(group_id);
  if (!g) return out;
  out.group_state = group::state_name(g->state);
  out.protocol_type = g->protocol_type.value_or("");
  // Kafka names the protocol only once it is decided (Stable).
  bool stable = g->is(group::GroupState::kStable);
  out.protocol_data = stable ? g->protocol_name.value_or("") : "";
  for (const auto& [id, m] : g->members) {
    DescribeGroupsResponse::DescribedGroupMember member;
    member.member_id = id;
    member.group_instance_id = m.instance_id;
    member.client_id = m.client_id;
    member.client_host = m.client_host;
    if (stable && g->protocol_name) {
      const Bytes* metadata = m.metadata_for(*g->protocol_name);
      if (metadata) member.member_metadata = *metadata;
      member.member_assignment = m.assignment;
    }
    out.members.push_back(std::move(member));
  }
  return out;
}

}  // namespace

void handle_describe_groups(Broker& broker, Request& request) {
  protocol::DescribeGroupsRequest body;
  if (!request.decode(body)) return;
  DescribeGroupsResponse response;
  for (const auto& id : body.groups) response.groups.push_back(describe(broker, id));
  // As Kafka: only the groups described without an error get the field.
  if (request.version() >= 3 && body.include_authorized_operations) {
    for (auto& group : response.groups) {
      if (group.error_code == 0) group.authorized_operations = kGroupOperations;
    }
  }
  request.respond(response);
}

}  // namespace samsa

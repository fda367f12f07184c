// ElectLeaders (v0-2, KIP-460): preferred or unclean leader elections asked
// for by an operator (kafka-leader-election.sh, `samsa election`), planned
// on the controller (controller/leader_rebalance.h) against its view and
// answered once the leadership changes commit. v0 has no ElectionType (it
// is PREFERRED) and no top-level error. A broker that is not the
// controller forwards the request (broker/controller_forwarder.h).
#include <map>

#include "base/log.h"
#include "broker/async_response.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/request.h"
#include "controller/leader_rebalance.h"
#include "protocol/error_code.h"
#include "broker/cluster_membership.h"
#include "protocol/generated/elect_leaders.h"

namespace samsa {
namespace {

using protocol::ElectLeadersRequest;
using protocol::ElectLeadersResponse;
using protocol::ErrorCode;

std::optional<std::vector<ElectionRequestTopic>> requested(const ElectLeadersRequest& body) {
  if (!body.topic_partitions) return std::nullopt;
  std::vector<ElectionRequestTopic> out;
  for (const auto& t : *body.topic_partitions) out.push_back(ElectionRequestTopic{t.topic, t.partitions});
  return out;
}

// Results grouped by topic, in the order the topics first appear.
std::vector<ElectLeadersResponse::ReplicaElectionResult> to_wire(const std::vector<PartitionElectionResult>& results) {
  std::vector<ElectLeadersResponse::ReplicaElectionResult> out;
  std::map<std::string, size_t> slot;
  for (const auto& r : results) {
    auto [it, added] = slot.emplace(r.topic, out.size());
    if (added) {
      out.emplace_back();
      out.back().topic = r.topic;
    }
    ElectLeadersResponse::PartitionResult p;
    p.partition_id = r.partition;
    p.error_code = int16_t(r.error);
    p.error_message = r.message;
    out[it->second].partition_result.push_back(std::move(p));
  }
  return out;
}

// Every named partition answered with the controller's error (not the
// controller, timed out): nothing is known to have been elected. A request
// for every partition gets it as the top-level error instead (v1+).
std::vector<PartitionElectionResult> all_failed(const ElectLeadersRequest& body, const ControllerError& e) {
  std::vector<PartitionElectionResult> out;
  if (!body.topic_partitions) return out;
  for (const auto& t : *body.topic_partitions) {
    for (int32_t id : t.partitions) out.push_back(PartitionElectionResult{t.topic, id, e.code, e.message});
  }
  return out;
}

}  // namespace

void handle_elect_leaders(Broker& broker, Request& request) {
  ElectLeadersRequest body;
  if (!request.decode(body)) return;
  if (body.election_type != int8_t(ElectionType::kPreferred) && body.election_type != int8_t(ElectionType::kUnclean)) {
    ElectLeadersResponse response;
    response.error_code = int16_t(ErrorCode::kInvalidRequest);
    request.respond(response);
    return;
  }
  const auto type = ElectionType(body.election_type);
  auto planned = std::make_shared<ElectionPlan>();
  PlanFn plan = [type, partitions = requested(body), planned, policy = election_policy(broker.config())](const MetadataImage& view) -> Plan {
    *planned = plan_elections(view, type, partitions, policy);
    return planned->records;
  };
  auto reply = AsyncResponse<ElectLeadersResponse>::start(request);
  broker.submit_change(type == ElectionType::kPreferred ? "preferred leader election" : "unclean leader election",
                       plan, body.timeout_ms,
                       [reply, planned, body](std::optional<ControllerError> e) {
                         reply->response().replica_election_results =
                             to_wire(e ? all_failed(body, *e) : planned->results);
                         // Every partition asked for (null) has no slot to say it in.
                         if (e && !body.topic_partitions) reply->response().error_code = int16_t(e->code);
                         reply->finish();
                       });
}

}  // namespace samsa

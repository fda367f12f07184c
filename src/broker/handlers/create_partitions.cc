// CreatePartitions (v0-3): grows topics to `count` partitions, placed by the
// controller or as assigned (one replica list per new partition), committed
// through the metadata log unless validate_only. A topic named twice in one
// request gets INVALID_REQUEST, as in Kafka; so does an internal topic, whose
// partition count the coordinators' hashing depends on. Partition counts are
// bounded (max.partitions.per.request over the whole request, then
// max.partitions.per.topic and max.partitions per topic) before anything is
// planned, validate_only included: POLICY_VIOLATION with a message.
#include <algorithm>
#include <map>

#include "base/log.h"
#include "broker/async_response.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/request.h"
#include "controller/topic_rules.h"
#include "protocol/error_code.h"
#include "protocol/generated/create_partitions.h"

namespace samsa {
namespace {

using protocol::CreatePartitionsRequest;
using protocol::CreatePartitionsResponse;
using protocol::ErrorCode;
using TopicResult = CreatePartitionsResponse::CreatePartitionsTopicResult;

TopicResult result_for(const std::string& name, ErrorCode code, std::optional<std::string> message = std::nullopt) {
  TopicResult result;
  result.name = name;
  result.error_code = int16_t(code);
  result.error_message = std::move(message);
  return result;
}

using AsyncReply = AsyncResponse<CreatePartitionsResponse>;

// Fills slot `slot` now (a refusal, validate_only) or when the new
// partitions commit.
void grow(Broker& broker, const CreatePartitionsRequest::CreatePartitionsTopic& topic, bool validate_only,
          int64_t timeout_ms, const std::shared_ptr<AsyncReply>& reply, size_t slot) {
  TopicResult& result = reply->response().results[slot];
  if (is_internal_topic(topic.name) && broker.image().topic(topic.name)) {
    // Groups map to __consumer_offsets partitions by hash modulo the count.
    result = result_for(topic.name, ErrorCode::kInvalidRequest,
                        "The partition count of internal topic " + topic.name + " cannot change.");
    return;
  }
  std::vector<std::vector<NodeId>> assignments;
  if (topic.assignments) {
    for (const auto& a : *topic.assignments) {
      std::vector<NodeId> replicas;
      for (int32_t id : a.broker_ids) replicas.push_back(NodeId(id));
      assignments.push_back(std::move(replicas));
    }
  }
  PlanFn plan = [&broker, name = topic.name, count = topic.count, assignments,
                 limits = broker.partition_limits()](const MetadataImage& view) {
    return plan_create_partitions(view, name, count, assignments, limits, broker.rng());
  };
  if (validate_only) {
    Plan planned = broker.controller().dry_run(plan);
    auto* e = std::get_if<ControllerError>(&planned);
    result = e ? result_for(topic.name, e->code, e->message) : result_for(topic.name, ErrorCode::kNone);
    return;
  }
  reply->add_part();
  broker.submit_change("new partitions of topic " + topic.name, plan, timeout_ms,
                       [name = topic.name, count = topic.count, reply, slot](std::optional<ControllerError> e) {
                         if (!e) LOG_INFO("controller", "topic {} now has {} partitions", name, count);
                         reply->response().results[slot] =
                             e ? result_for(name, e->code, e->message) : result_for(name, ErrorCode::kNone);
                         reply->finish();
                       });
}

// The partitions the request would add to existing topics, bounded by
// max.partitions.per.request before any is planned (validate_only too).
std::optional<ControllerError> check_request_size(Broker& broker, const CreatePartitionsRequest& body) {
  int64_t added = 0;
  for (const auto& topic : body.topics) {
    const TopicState* t = broker.image().topic(topic.name);
    if (t) added += std::max<int64_t>(0, int64_t(topic.count) - int64_t(t->partitions.size()));
  }
  return check_partitions_per_request(added, broker.partition_limits());
}

}  // namespace

void handle_create_partitions(Broker& broker, Request& request) {
  CreatePartitionsRequest body;
  if (!request.decode(body)) return;

  std::map<std::string, int> count;
  for (const auto& topic : body.topics) ++count[topic.name];
  CreatePartitionsResponse response;
  if (auto refused = check_request_size(broker, body)) {
    for (const auto& [name, n] : count) response.results.push_back(result_for(name, refused->code, refused->message));
    request.respond(response);
    return;
  }
  auto reply = AsyncReply::start(request);
  reply->response() = std::move(response);
  for (const auto& topic : body.topics) {
    int& n = count[topic.name];
    if (n == 1) {
      reply->response().results.emplace_back();
      grow(broker, topic, body.validate_only, body.timeout_ms, reply, reply->response().results.size() - 1);
    } else if (n > 1) {
      reply->response().results.push_back(
          result_for(topic.name, ErrorCode::kInvalidRequest, "Duplicate topic in request."));
      n = 0;  // one answer per duplicated topic
    }
  }
  reply->finish();
}

}  // namespace samsa

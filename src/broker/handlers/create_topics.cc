// CreateTopics (v0-7): each topic is validated (name, configs, partitions,
// replication factor or manual assignment), placed and committed by the
// controller (Broker::create_topic); validate_only (v1+) stops before the
// commit. v1+ carries error messages; v5+ describes the created topic
// (partitions, replication factor, every config with its source); v7 adds
// the topic id. -1 partitions / replication factor take the broker defaults
// (num.partitions, default.replication.factor), in every version. A
// request adding more than max.partitions.per.request partitions in all is
// refused whole (POLICY_VIOLATION), as Kafka refuses more than 10,000.
#include <algorithm>
#include <set>

#include "base/log.h"
#include "broker/async_response.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/request.h"
#include "protocol/error_code.h"
#include "protocol/generated/create_topics.h"

namespace samsa {
namespace {

using protocol::CreateTopicsRequest;
using protocol::CreateTopicsResponse;
using protocol::ErrorCode;
using TopicResult = CreateTopicsResponse::CreatableTopicResult;

TopicResult failed(const std::string& name, ErrorCode code, std::string message) {
  TopicResult result;
  result.name = name;
  result.error_code = int16_t(code);
  result.error_message = std::move(message);
  return result;
}

// The request's topic as the controller takes it, or the error that refuses
// it before the controller sees it (configs, assignment shape).
std::variant<NewTopic, ControllerError> to_new_topic(const CreateTopicsRequest::CreatableTopic& topic) {
  NewTopic out;
  out.name = topic.name;
  out.num_partitions = topic.num_partitions;
  out.replication_factor = topic.replication_factor;
  for (const auto& config : topic.configs) {
    if (!config.value) {
      return ControllerError{ErrorCode::kInvalidConfig, "Null value not supported for topic configs: " + config.name};
    }
    if (!out.configs.emplace(config.name, *config.value).second) {
      return ControllerError{ErrorCode::kInvalidConfig, "Duplicate topic config: " + config.name};
    }
  }
  auto assignments = topic.assignments;
  std::sort(assignments.begin(), assignments.end(),
            [](const auto& a, const auto& b) { return a.partition_index < b.partition_index; });
  for (size_t i = 0; i < assignments.size(); ++i) {
    // Kafka's words (ReplicationControlManager.createTopic).
    if (i > 0 && assignments[i].partition_index == assignments[i - 1].partition_index) {
      return ControllerError{ErrorCode::kInvalidReplicaAssignment,
                             "Found multiple manual partition assignments for partition " +
                                 std::to_string(assignments[i].partition_index)};
    }
    if (assignments[i].partition_index != int32_t(i)) {
      return ControllerError{ErrorCode::kInvalidReplicaAssignment,
                             "partitions should be a consecutive 0-based integer sequence"};
    }
    std::vector<NodeId> replicas;
    for (int32_t id : assignments[i].broker_ids) replicas.push_back(NodeId(id));
    out.assignments.push_back(std::move(replicas));
  }
  return out;
}

// v5+: the topic as created (or as it would be, with validate_only).
void describe_created(Broker& broker, const NewTopic& topic, TopicResult& result) {
  if (const TopicState* created = broker.image().topic(topic.name)) {
    result.topic_id = protocol::Uuid{created->id.bytes};
    result.num_partitions = int32_t(created->partitions.size());
    result.replication_factor = int16_t(created->partitions.front().replicas.size());
  } else if (!topic.assignments.empty()) {
    result.num_partitions = int32_t(topic.assignments.size());
    result.replication_factor = int16_t(topic.assignments.front().size());
  } else {
    result.num_partitions = topic.num_partitions == -1 ? broker.config().num_partitions : topic.num_partitions;
    result.replication_factor =
        topic.replication_factor == -1 ? broker.config().default_replication_factor : topic.replication_factor;
  }
  result.configs.emplace();
  ConfigValues values = broker.topic_configs().values_for(topic.configs);
  for (const auto& [name, entry] : values.entries()) {
    CreateTopicsResponse::CreatableTopicConfigs config;
    config.name = name;
    config.value = values.describe_value(name);
    config.read_only = false;
    config.config_source = int8_t(entry.source);
    config.is_sensitive = entry.sensitive;
    result.configs->push_back(std::move(config));
  }
}

using AsyncReply = AsyncResponse<CreateTopicsResponse>;

// Answers slot `slot` of the response when the controller is done with it.
void create_one(Broker& broker, const CreateTopicsRequest::CreatableTopic& requested, bool validate_only,
                int64_t timeout_ms, const std::shared_ptr<AsyncReply>& reply, size_t slot) {
  auto converted = to_new_topic(requested);
  if (auto* e = std::get_if<ControllerError>(&converted)) {
    reply->response().topics[slot] = failed(requested.name, e->code, e->message);
    return;
  }
  NewTopic topic = std::get<NewTopic>(std::move(converted));
  reply->add_part();
  broker.create_topic(topic, validate_only, timeout_ms,
                      [&broker, topic, reply, slot](std::optional<ControllerError> e) {
                        TopicResult& result = reply->response().topics[slot];
                        if (e) {
                          result = failed(topic.name, e->code, e->message);
                        } else {
                          result.name = topic.name;
                          result.error_message = std::nullopt;
                          describe_created(broker, topic, result);
                        }
                        reply->finish();
                      });
}

// Kafka's bound on the whole request (KAFKA-17870), before any topic is
// looked at: over it, no topic is created and each one gets the error.
std::optional<ControllerError> check_request_size(Broker& broker, const CreateTopicsRequest& body) {
  TopicDefaults defaults{broker.config().num_partitions, broker.config().default_replication_factor};
  int64_t requested = 0;
  for (const auto& topic : body.topics) {
    requested += requested_partitions(topic.num_partitions, topic.assignments.size(), defaults);
  }
  return check_partitions_per_request(requested, broker.partition_limits());
}

}  // namespace

void handle_create_topics(Broker& broker, Request& request) {
  CreateTopicsRequest body;
  if (!request.decode(body)) return;

  std::set<std::string> seen;
  std::set<std::string> duplicates;
  for (const auto& topic : body.topics) {
    if (!seen.insert(topic.name).second) duplicates.insert(topic.name);
  }
  CreateTopicsResponse response;
  if (auto refused = check_request_size(broker, body)) {
    for (const auto& name : seen) response.topics.push_back(failed(name, refused->code, refused->message));
    request.respond(response);
    return;
  }
  for (const auto& name : duplicates) {
    response.topics.push_back(failed(name, ErrorCode::kInvalidRequest, "Found multiple entries for this topic."));
  }
  // Each topic is answered when its creation commits; the response goes
  // when the last one is in (Kafka's controller answers the request whole).
  auto reply = AsyncReply::start(request);
  reply->response() = std::move(response);
  for (const auto& topic : body.topics) {
    if (duplicates.contains(topic.name)) continue;
    reply->response().topics.emplace_back();
    create_one(broker, topic, body.validate_only, body.timeout_ms, reply, reply->response().topics.size() - 1);
  }
  reply->finish();
}

}  // namespace samsa

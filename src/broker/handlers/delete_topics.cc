// DeleteTopics (v0-6): topics by name (v0-5) or by name or id (v6+). Each
// deletion is a RemoveTopicRecord committed to the metadata log; applying it
// makes ReplicaManager delete the partitions' logs (directory renamed to
// `*-delete`, then removed). With delete.topic.enable=false every topic gets
// TOPIC_DELETION_DISABLED (INVALID_REQUEST before v3, which predates that
// code), as in Kafka. Duplicates and ambiguous entries get INVALID_REQUEST,
// and so do internal topics (__consumer_offsets), which their coordinators own.
#include <array>
#include <map>

#include "base/log.h"
#include "broker/async_response.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/request.h"
#include "controller/topic_rules.h"
#include "protocol/error_code.h"
#include "protocol/generated/delete_topics.h"

namespace samsa {
namespace {

using protocol::DeleteTopicsRequest;
using protocol::DeleteTopicsResponse;
using protocol::ErrorCode;
using TopicResult = DeleteTopicsResponse::DeletableTopicResult;

constexpr int16_t kFirstVersionWithDeletionDisabledError = 3;

TopicResult result_for(std::optional<std::string> name, const protocol::Uuid& id, ErrorCode code,
                       std::optional<std::string> message = std::nullopt) {
  TopicResult result;
  result.name = std::move(name);
  result.topic_id = id;
  result.error_code = int16_t(code);
  result.error_message = std::move(message);
  return result;
}

using AsyncReply = AsyncResponse<DeleteTopicsResponse>;

// Fills slot `slot` now (a refusal) or when the removal commits.
void delete_by_name(Broker& broker, const std::string& name, int64_t timeout_ms, const std::shared_ptr<AsyncReply>& reply,
                    size_t slot) {
  TopicResult& result = reply->response().responses[slot];
  const TopicState* topic = broker.image().topic(name);
  if (!topic) {
    result = result_for(name, {}, ErrorCode::kUnknownTopicOrPartition, "This server does not host this topic-partition.");
    return;
  }
  protocol::Uuid id{topic->id.bytes};
  if (is_internal_topic(name)) {
    // The group and transaction coordinators own these; deleting one would
    // pull their logs away. (Kafka leaves this check to its tools.)
    result = result_for(name, id, ErrorCode::kInvalidRequest, "Internal topic " + name + " cannot be deleted.");
    return;
  }
  reply->add_part();
  broker.submit_change(
      "the deletion of topic " + name, [name](const MetadataImage& view) { return plan_delete_topic(view, name); },
      timeout_ms, [name, id, reply, slot](std::optional<ControllerError> e) {
        if (!e) LOG_INFO("controller", "deleted topic {}", name);
        reply->response().responses[slot] =
            e ? result_for(name, id, e->code, e->message) : result_for(name, id, ErrorCode::kNone);
        reply->finish();
      });
}

void delete_by_id(Broker& broker, const protocol::Uuid& id, int64_t timeout_ms, const std::shared_ptr<AsyncReply>& reply,
                  size_t slot) {
  const TopicState* topic = broker.image().topic_by_id(Uuid{id.bytes});
  if (!topic) {
    reply->response().responses[slot] =
        result_for(std::nullopt, id, ErrorCode::kUnknownTopicId, "This server does not host this topic ID.");
    return;
  }
  delete_by_name(broker, std::string(topic->name), timeout_ms, reply, slot);
}

// v0-5 names become entries without ids, so one path serves every version.
std::vector<DeleteTopicsRequest::DeleteTopicState> requested_topics(const DeleteTopicsRequest& body, int16_t version) {
  if (version >= 6) return body.topics;
  std::vector<DeleteTopicsRequest::DeleteTopicState> out;
  for (const auto& name : body.topic_names) {
    DeleteTopicsRequest::DeleteTopicState t;
    t.name = name;
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

void handle_delete_topics(Broker& broker, Request& request) {
  DeleteTopicsRequest body;
  if (!request.decode(body)) return;
  int16_t version = request.version();
  auto topics = requested_topics(body, version);

  DeleteTopicsResponse response;
  if (!broker.config().delete_topic_enable) {
    ErrorCode code = version < kFirstVersionWithDeletionDisabledError ? ErrorCode::kInvalidRequest
                                                                       : ErrorCode::kTopicDeletionDisabled;
    for (const auto& t : topics) {
      response.responses.push_back(result_for(t.name, t.topic_id, code, "Topic deletion is disabled."));
    }
    request.respond(response);
    return;
  }

  // Entries named once are acted on; a name or id given twice gets one
  // INVALID_REQUEST answer (its count then drops to 0, muting the rest).
  auto reply = AsyncReply::start(request);
  reply->response() = std::move(response);
  std::map<std::string, int> name_count;
  std::map<std::array<uint8_t, 16>, int> id_count;
  for (const auto& t : topics) {
    if (t.name) ++name_count[*t.name];
    if (!t.topic_id.is_zero()) ++id_count[t.topic_id.bytes];
  }
  for (const auto& t : topics) {
    bool has_id = !t.topic_id.is_zero();
    if (!t.name && !has_id) {
      reply->response().responses.push_back(result_for(std::nullopt, t.topic_id, ErrorCode::kInvalidRequest,
                                                       "Neither topic name nor id were specified."));
      continue;
    }
    if (t.name && has_id) {
      reply->response().responses.push_back(result_for(t.name, t.topic_id, ErrorCode::kInvalidRequest,
                                                       "You may not specify both topic name and topic id."));
      continue;
    }
    int& count = t.name ? name_count[*t.name] : id_count[t.topic_id.bytes];
    if (count == 1) {
      reply->response().responses.emplace_back();
      size_t slot = reply->response().responses.size() - 1;
      if (t.name) {
        delete_by_name(broker, *t.name, body.timeout_ms, reply, slot);
      } else {
        delete_by_id(broker, t.topic_id, body.timeout_ms, reply, slot);
      }
    } else if (count > 1) {
      reply->response().responses.push_back(
          t.name ? result_for(t.name, {}, ErrorCode::kInvalidRequest, "Duplicate topic name.")
                 : result_for(std::nullopt, t.topic_id, ErrorCode::kInvalidRequest, "Duplicate topic id."));
      count = 0;
    }
  }
  reply->finish();
}

}  // namespace samsa

#include "broker/controller_forwarder.h"

#include "base/log.h"
#include "protocol/error_code.h"
#include "protocol/generated/create_topics.h"

namespace samsa {
namespace {

using protocol::ErrorCode;

protocol::CreateTopicsRequest to_request(const NewTopic& topic, bool validate_only, int64_t timeout_ms) {
  protocol::CreateTopicsRequest request;
  request.timeout_ms = int32_t(timeout_ms);
  request.validate_only = validate_only;
  protocol::CreateTopicsRequest::CreatableTopic t;
  t.name = topic.name;
  t.num_partitions = topic.assignments.empty() ? topic.num_partitions : -1;
  t.replication_factor = topic.assignments.empty() ? topic.replication_factor : int16_t(-1);
  for (size_t i = 0; i < topic.assignments.size(); ++i) {
    protocol::CreateTopicsRequest::CreatableReplicaAssignment a;
    a.partition_index = int32_t(i);
    for (NodeId id : topic.assignments[i]) a.broker_ids.push_back(id.value());
    t.assignments.push_back(std::move(a));
  }
  for (const auto& [name, value] : topic.configs) t.configs.push_back({name, value});
  request.topics.push_back(std::move(t));
  return request;
}

constexpr const char* kForwardClientPrefix = "samsa-forward-";

}  // namespace

bool ControllerForwarder::forwards(int16_t api_key) {
  switch (protocol::ApiKey(api_key)) {
    case protocol::ApiKey::kDeleteTopics:
    case protocol::ApiKey::kCreatePartitions:
    case protocol::ApiKey::kElectLeaders:
    case protocol::ApiKey::kAlterConfigs:
    case protocol::ApiKey::kIncrementalAlterConfigs:
    case protocol::ApiKey::kAlterClientQuotas:
    case protocol::ApiKey::kUnregisterBroker:
    case protocol::ApiKey::kAllocateProducerIds:
      return true;
    default:
      return false;
  }
}

bool ControllerForwarder::sends(int16_t api_key) {
  return forwards(api_key) || api_key == int16_t(protocol::ApiKey::kCreateTopics);
}

bool ControllerForwarder::is_forwarded(const std::string& client_id) {
  return client_id.rfind(kForwardClientPrefix, 0) == 0;
}

ControllerForwarder::ControllerForwarder(Runtime& runtime, NodeId self,
                                         std::function<std::optional<LeaderEndpoint>()> controller)
    : runtime_(runtime), self_(self), controller_(std::move(controller)) {}

ControllerForwarder::~ControllerForwarder() { *alive_ = false; }

KafkaClient& ControllerForwarder::client_for(const LeaderEndpoint& target) {
  Link& link = links_[target.id];
  // A connection the peer closed while nothing was in flight (a controller
  // killed between two requests) is dialed again: a request written to it
  // would wait for a connection that never comes.
  bool closed = link.client && !*link.dialing && !link.client->connected();
  if (!link.client || !(link.endpoint == target) || closed) {
    if (link.client) runtime_.post([old = std::shared_ptr<KafkaClient>(std::move(link.client))] {});
    link.endpoint = target;
    link.client = std::make_unique<KafkaClient>(runtime_, kForwardClientPrefix + std::to_string(self_.value()));
    link.dialing = std::make_shared<bool>(true);
    link.client->connect(target.host, target.port, kDefaultTimeoutMs,
                         [dialing = link.dialing](Status) { *dialing = false; });
  }
  return *link.client;
}

// From a posted task: this may run inside the client's own callback.
void ControllerForwarder::drop(NodeId target) {
  auto it = links_.find(target);
  if (it == links_.end()) return;
  runtime_.post([dropped = std::shared_ptr<KafkaClient>(std::move(it->second.client))] {});
  links_.erase(it);
}

void ControllerForwarder::create_topic(const NewTopic& topic, bool validate_only, int64_t timeout_ms,
                                       ControllerDone done) {
  std::optional<LeaderEndpoint> target = controller_();
  if (!target || target->id == self_) {
    return done(ControllerError{ErrorCode::kNotController, "No active controller is known yet."});
  }
  int64_t wait_ms = timeout_ms > 0 ? timeout_ms : kDefaultTimeoutMs;
  // One outcome: the answer or the timeout, whichever comes first.
  auto once = std::make_shared<ControllerDone>(std::move(done));
  auto finish = [once](std::optional<ControllerError> outcome) {
    if (!*once) return;
    ControllerDone d = std::move(*once);
    *once = nullptr;
    d(std::move(outcome));
  };
  TimerId timer = runtime_.add_timer(wait_ms, [finish, name = topic.name] {
    finish(ControllerError{ErrorCode::kRequestTimedOut, "The forwarded creation of " + name +
                                                            " got no answer from the controller in time."});
  });
  NodeId to = target->id;
  client_for(*target).call<protocol::CreateTopicsRequest, protocol::CreateTopicsResponse>(
      to_request(topic, validate_only, wait_ms), kCreateTopicsVersion,
      [this, alive = alive_, finish, timer, to](Result<protocol::CreateTopicsResponse> answer) {
        if (!*alive) return;
        runtime_.cancel_timer(timer);
        if (!answer.ok()) {
          drop(to);
          return finish(ControllerError{ErrorCode::kNotController,
                                        "The active controller (node " + std::to_string(to.value()) +
                                            ") could not be reached: " + answer.error().to_string()});
        }
        if (answer->topics.size() != 1) {
          return finish(ControllerError{ErrorCode::kUnknownServerError, "The controller answered no topic."});
        }
        const auto& result = answer->topics.front();
        if (result.error_code == 0) return finish(std::nullopt);
        finish(ControllerError{ErrorCode(result.error_code), result.error_message.value_or("")});
      });
}

void ControllerForwarder::forward(int16_t api_key, int16_t api_version, ByteView body, RawDone done) {
  std::optional<LeaderEndpoint> target = controller_();
  if (!target || target->id == self_) return done(Error(ErrorKind::kNotFound, "no active controller is known"));
  auto once = std::make_shared<RawDone>(std::move(done));
  auto finish = [once](Result<Bytes> outcome) {
    if (!*once) return;
    RawDone d = std::move(*once);
    *once = nullptr;
    d(std::move(outcome));
  };
  TimerId timer = runtime_.add_timer(kDefaultTimeoutMs, [finish] {
    finish(Error(ErrorKind::kTimedOut, "the active controller did not answer in time"));
  });
  NodeId to = target->id;
  // The body is written before call_raw returns (the encoder runs inside it).
  client_for(*target).call_raw(
      api_key, api_version,
      [body](protocol::Encoder& w) { w.out().bytes().insert(w.out().bytes().end(), body.begin(), body.end()); },
      [this, alive = alive_, finish, timer, to](Result<ByteView> answer) {
        if (!*alive) return;
        runtime_.cancel_timer(timer);
        if (!answer.ok()) {
          drop(to);
          return finish(answer.error());
        }
        finish(Bytes(answer->begin(), answer->end()));
      },
      true);
}

}  // namespace samsa

#include "broker/controller_forwarder.h"

#include <utility>

#include "base/log.h"
#include "broker/forwarded_answer.h"
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

// One forwarded creation, tried until it is answered or out of time.
struct ControllerForwarder::Creation {
  NewTopic topic;
  bool validate_only = false;
  int64_t timeout_ms = 0;  // the whole wait, and what the controller is given
  bool waits = false;      // tried again on no or a lost controller (a client's request)
  ControllerDone done;     // empty once answered
  TimerId deadline = 0;
  ControllerError last{ErrorCode::kRequestTimedOut, ""};  // the answer when time runs out

  void finish(Runtime& runtime, std::optional<ControllerError> outcome) {
    if (!done) return;
    runtime.cancel_timer(deadline);
    std::exchange(done, nullptr)(std::move(outcome));
  }
};

// One forwarded request of another API, likewise.
struct ControllerForwarder::RawForward {
  int16_t api_key = 0;
  int16_t api_version = 0;
  Bytes body;
  RawDone done;
  TimerId deadline = 0;
  Error last{ErrorKind::kTimedOut, "the active controller did not answer in time"};

  void finish(Runtime& runtime, Result<Bytes> outcome) {
    if (!done) return;
    runtime.cancel_timer(deadline);
    std::exchange(done, nullptr)(std::move(outcome));
  }
};

void ControllerForwarder::retry_later(std::function<void()> again) {
  runtime_.add_timer(kRetryBackoffMs, [alive = alive_, again = std::move(again)] {
    if (*alive) again();
  });
}

void ControllerForwarder::create_topic(const NewTopic& topic, bool validate_only, int64_t timeout_ms,
                                       ControllerDone done) {
  auto c = std::make_shared<Creation>();
  c->topic = topic;
  c->validate_only = validate_only;
  c->timeout_ms = timeout_ms > 0 ? timeout_ms : kDefaultTimeoutMs;
  c->waits = timeout_ms > 0;
  c->done = std::move(done);
  c->last.message = "The forwarded creation of " + topic.name + " got no answer from the controller in time.";
  c->deadline = runtime_.add_timer(c->timeout_ms, [this, alive = alive_, c] {
    if (*alive) c->finish(runtime_, c->last);
  });
  attempt(c);
}

void ControllerForwarder::attempt(std::shared_ptr<Creation> c) {
  if (!c->done) return;
  std::optional<LeaderEndpoint> target = controller_();
  if (target && target->id == self_) {
    return c->finish(runtime_,
                     ControllerError{ErrorCode::kNotController, "This node is not the active controller yet."});
  }
  if (!target) {
    c->last = ControllerError{ErrorCode::kNotController, "No active controller is known yet."};
    return c->waits ? retry_later([this, c] { attempt(c); }) : c->finish(runtime_, c->last);
  }
  c->last = ControllerError{ErrorCode::kRequestTimedOut, "The forwarded creation of " + c->topic.name +
                                                             " got no answer from the controller in time."};
  NodeId to = target->id;
  client_for(*target).call<protocol::CreateTopicsRequest, protocol::CreateTopicsResponse>(
      to_request(c->topic, c->validate_only, c->timeout_ms), kCreateTopicsVersion,
      [this, alive = alive_, c, to](Result<protocol::CreateTopicsResponse> answer) {
        if (!*alive || !c->done) return;
        if (!answer.ok()) {
          drop(to);
          c->last = ControllerError{ErrorCode::kNotController,
                                    "The active controller (node " + std::to_string(to.value()) +
                                        ") could not be reached: " + answer.error().to_string()};
          return c->waits ? retry_later([this, c] { attempt(c); }) : c->finish(runtime_, c->last);
        }
        if (answer->topics.size() != 1) {
          return c->finish(runtime_,
                           ControllerError{ErrorCode::kUnknownServerError, "The controller answered no topic."});
        }
        const auto& result = answer->topics.front();
        if (result.error_code == int16_t(ErrorCode::kNotController) && c->waits) {  // it lost the leadership
          c->last = ControllerError{ErrorCode::kNotController, result.error_message.value_or("")};
          return retry_later([this, c] { attempt(c); });
        }
        if (result.error_code == 0) return c->finish(runtime_, std::nullopt);
        c->finish(runtime_, ControllerError{ErrorCode(result.error_code), result.error_message.value_or("")});
      });
}

void ControllerForwarder::forward(int16_t api_key, int16_t api_version, ByteView body, RawDone done) {
  auto f = std::make_shared<RawForward>();
  f->api_key = api_key;
  f->api_version = api_version;
  f->body.assign(body.begin(), body.end());
  f->done = std::move(done);
  f->deadline = runtime_.add_timer(kDefaultTimeoutMs, [this, alive = alive_, f] {
    if (*alive) f->finish(runtime_, f->last);
  });
  attempt(f);
}

void ControllerForwarder::attempt(std::shared_ptr<RawForward> f) {
  if (!f->done) return;
  std::optional<LeaderEndpoint> target = controller_();
  if (target && target->id == self_) {
    return f->finish(runtime_, Error(ErrorKind::kNotFound, "this node is not the active controller yet"));
  }
  if (!target) {
    f->last = Error(ErrorKind::kNotFound, "no active controller is known");
    return retry_later([this, f] { attempt(f); });
  }
  f->last = Error(ErrorKind::kTimedOut, "the active controller did not answer in time");
  NodeId to = target->id;
  // The body is written before call_raw returns (the encoder runs inside it).
  client_for(*target).call_raw(
      f->api_key, f->api_version,
      [f](protocol::Encoder& w) {
        w.out().bytes().insert(w.out().bytes().end(), f->body.begin(), f->body.end());
      },
      [this, alive = alive_, f, to](Result<ByteView> answer) {
        if (!*alive || !f->done) return;
        if (!answer.ok()) {
          drop(to);
          f->last = answer.error();
          return retry_later([this, f] { attempt(f); });
        }
        if (forwarded_answer_says_not_controller(f->api_key, f->api_version, *answer)) {
          // It lost the leadership before planning the change: the next
          // controller known gets the request (the answer is not the client's).
          f->last = Error(ErrorKind::kNotFound,
                          "node " + std::to_string(to.value()) + " is no longer the active controller");
          return retry_later([this, f] { attempt(f); });
        }
        f->finish(runtime_, Bytes(answer->begin(), answer->end()));
      },
      true);
}

}  // namespace samsa

#pragma once
// ControllerForwarder: a topic creation asked of a node of a quorum that is
// not the active controller goes to the one that is, as Kafka's brokers
// forward CreateTopics to the controller (ForwardingManager, KIP-590), so a
// client may ask any node, and Metadata's auto-creation and the first group
// request's __consumer_offsets work on every node. The creation travels as
// a CreateTopics request to the active controller's controller listener
// (as Kafka's brokers forward there; a controller-only node has no other),
// from a KafkaClient kept per target; its answer is the outcome.
//
// - As Kafka's ForwardingManager, a request waits out an election: while no
//   active controller is known, or the one known cannot be reached, or it
//   answers NOT_CONTROLLER because it just lost the leadership, the request
//   is tried again every kRetryBackoffMs until its timeout (the creation's,
//   else kDefaultTimeoutMs). Only a client's
//   request waits: a creation without a timeout of its own (Metadata's
//   auto-creation, __consumer_offsets on the first group request) is tried
//   once, as before, and the client's next request creates again. A client sees the
//   election as latency, not as NOT_CONTROLLER. A request sent again after
//   a broken connection may have committed the first time (a creation then
//   answers TOPIC_ALREADY_EXISTS), as with Kafka.
// - Out of time: the last reason (NOT_CONTROLLER for no controller or an
//   unreachable one, REQUEST_TIMED_OUT for no answer; the creation may
//   still commit).
// - This node itself named as the active controller (a stale view): no
//   wait, NOT_CONTROLLER at once, as before.
//
// Loop-thread only. The Runtime outlives it.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "controller/quorum_controller.h"
#include "controller/topic_planner.h"
#include "io/kafka_client.h"
#include "io/runtime.h"
#include "replication/replica_fetcher.h"

namespace samsa {

class ControllerForwarder {
 public:
  static constexpr int64_t kDefaultTimeoutMs = 30000;  // Kafka's request.timeout.ms
  static constexpr int64_t kRetryBackoffMs = 100;      // Kafka's retry.backoff.ms
  static constexpr int16_t kCreateTopicsVersion = 5;

  // controller: the active controller's controller listener (nullopt:
  // none known).
  ControllerForwarder(Runtime& runtime, NodeId self, std::function<std::optional<LeaderEndpoint>()> controller);
  ~ControllerForwarder();
  ControllerForwarder(const ControllerForwarder&) = delete;
  ControllerForwarder& operator=(const ControllerForwarder&) = delete;

  void create_topic(const NewTopic& topic, bool validate_only, int64_t timeout_ms, ControllerDone done);

  // Any other metadata change (DeleteTopics, CreatePartitions, AlterConfigs,
  // IncrementalAlterConfigs, AlterClientQuotas): the request body as the
  // client sent it, to the active controller's controller listener; `done` gets
  // the response body as it answered, or an error (no controller known or
  // reachable, no answer, within kDefaultTimeoutMs): the caller then answers
  // itself (NOT_CONTROLLER). An answer that says NOT_CONTROLLER (the node
  // reached had just lost the leadership; forwarded_answer.h) is not the
  // client's: the request waits and goes to the next controller known, as a
  // creation does; any other error inside the answer is the client's.
  using RawDone = std::function<void(Result<Bytes>)>;
  void forward(int16_t api_key, int16_t api_version, ByteView body, RawDone done);
  // Whether an API key is one forward() is for.
  static bool forwards(int16_t api_key);
  // What arrives on the active controller's controller listener from this
  // class: forwards() and CreateTopics (create_topic).
  static bool sends(int16_t api_key);
  // The client id of forwarded requests: a node does not forward them
  // again (a request forwarded to a node that just lost the leadership is
  // answered NOT_CONTROLLER there, not sent on in a loop).
  static bool is_forwarded(const std::string& client_id);

 private:
  KafkaClient& client_for(const LeaderEndpoint& target);
  void drop(NodeId target);
  struct Creation;
  struct RawForward;
  void attempt(std::shared_ptr<Creation> c);
  void attempt(std::shared_ptr<RawForward> f);
  // Calls `again` after kRetryBackoffMs, unless this forwarder is gone.
  void retry_later(std::function<void()> again);

  Runtime& runtime_;
  NodeId self_;
  std::function<std::optional<LeaderEndpoint>()> controller_;
  struct Link {
    LeaderEndpoint endpoint;
    std::unique_ptr<KafkaClient> client;
    std::shared_ptr<bool> dialing = std::make_shared<bool>(false);  // until its connect() answers
  };
  std::map<NodeId, Link> links_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace samsa

#pragma once
// RaftNetworkTransport: a RaftTransport over the runtime's Network, the
// Kafka protocol framing and raft_wire's mapping (docs/formats/raft-wire.md).
//
// Outbound: one connection per peer of controller.quorum.voters (id@host:port),
// dialed when there is something to send, with a timeout
// (socket.connection.setup.timeout.ms); a failed dial or a broken connection
// is retried after a backoff that doubles from reconnect.backoff.ms up to
// reconnect.backoff.max.ms, with +-20% jitter (Kafka's NetworkClient). Each
// peer has a bounded queue (drop the oldest when full: Raft resends), at
// most kMaxInFlightPerPeer requests on the wire, and a request unanswered
// for controller.quorum.request.timeout.ms closes the connection (as
// Kafka's request.timeout.ms does). A response is decoded and handed to the
// receiver (RaftDriver::receive) from its own loop task.
//
// Inbound: deliver() hands a decoded request to the receiver and returns
// the core's answer to it, which the controller listener writes back as the
// Kafka response (the core answers in the step that got the request; a
// response-kind message sent at that moment to the requester is that answer,
// caught here instead of being queued).
//
// Loop-thread only. send() never calls back into the receiver: work is
// posted. The Runtime outlives the transport.

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/rng.h"
#include "io/kafka_client.h"
#include "controller/raft_driver.h"
#include "controller/raft_wire.h"
#include "io/runtime.h"

namespace samsa {

struct RaftPeer {
  NodeId id;
  std::string host;
  uint16_t port = 0;
};

struct RaftNetworkTransportOptions {
  RaftWireIdentity identity;
  std::vector<RaftPeer> peers;               // every other member this node talks to
  int64_t connect_timeout_ms = 10000;        // socket.connection.setup.timeout.ms
  int64_t reconnect_backoff_ms = 50;         // reconnect.backoff.ms
  int64_t reconnect_backoff_max_ms = 1000;   // reconnect.backoff.max.ms
  int64_t request_timeout_ms = 2000;         // controller.quorum.request.timeout.ms
  size_t max_queued_per_peer = 64;           // Resource budget: raft messages queued per peer
};

inline constexpr size_t kMaxInFlightPerPeer = 8;

class RaftNetworkTransport final : public RaftTransport {
 public:
  using Receiver = std::function<void(const raft::Message&)>;

  RaftNetworkTransport(Runtime& runtime, RaftNetworkTransportOptions options);
  ~RaftNetworkTransport() override;
  RaftNetworkTransport(const RaftNetworkTransport&) = delete;
  RaftNetworkTransport& operator=(const RaftNetworkTransport&) = delete;

  // Where decoded messages go (RaftDriver::receive); unset: dropped.
  void set_receiver(Receiver receiver) { receiver_ = std::move(receiver); }
  const RaftWireIdentity& identity() const { return options_.identity; }

  void send(const raft::Message& message) override;
  // An inbound request, decoded and checked: handed to the receiver; the
  // answer the core gave its sender, if any.
  std::optional<raft::Message> deliver(const raft::Message& request);

  struct Stats {
    uint64_t sent = 0;           // requests written
    uint64_t answered = 0;       // responses handed to the receiver
    uint64_t dropped_full = 0;   // dropped: the peer's queue was full
    uint64_t dropped_other = 0;  // dropped: no link, too large, a stray response
    uint64_t connects = 0;       // connections established
    uint64_t failures = 0;       // dials failed, connections broken or timed out
  };
  const Stats& stats() const { return stats_; }

 private:
  struct InFlight {
    raft::Message request;
    int64_t sent_ns = 0;
  };
  struct Link {
    RaftPeer peer;
    std::unique_ptr<KafkaClient> client;
    bool connecting = false;
    bool connected = false;
    TimerId backoff_timer = 0;
    int consecutive_failures = 0;
    uint64_t generation = 0;  // bumped per connection: callbacks of an old one are ignored
    std::deque<raft::Message> queue;
    std::deque<InFlight> in_flight;
    bool pump_posted = false;
  };

  Link* link_to(NodeId id);
  void post_pump(Link& link);
  void pump(Link& link);
  void dial(Link& link);
  void write_one(Link& link, raft::Message message);
  void on_answer(Link& link, uint64_t generation, Result<std::optional<raft::Message>> answer);
  void broken(Link& link, const Error& why);
  int64_t backoff_ms(int failures);
  void schedule_timeout_sweep();
  void sweep_timeouts();

  Runtime& runtime_;
  RaftNetworkTransportOptions options_;
  Rng rng_;
  Receiver receiver_;
  std::vector<std::unique_ptr<Link>> links_;
  // Set while deliver() runs the receiver: the requester and its answer.
  struct Capture {
    NodeId requester;
    std::optional<raft::Message> answer;
  };
  std::optional<Capture> capture_;
  TimerId sweep_timer_ = 0;
  Stats stats_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace samsa

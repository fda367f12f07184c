#pragma once
// RaftFetchClient: the RaftFetchTransport of a metadata-log observer over
// the network: each fetch goes as SamsaRaftFetch (1001,
// controller/raft_fetch_wire.h) on a KafkaClient connection to the voter's
// controller listener (its controller.quorum.voters endpoint), and the
// decoded answer goes to the receiver (RaftObserverDriver::receive).
//
// Best effort, as the observer expects: a connection that fails or breaks
// drops what was in flight (the observer times out and asks the next
// voter) and is dialed again at the next fetch to that voter; a refusal
// (an error code) or an answer that does not fit the request is logged
// and dropped. Callbacks come from the client's, never inside send().
// Loop-thread only.

#include <functional>
#include <memory>
#include <vector>

#include "controller/raft_network_transport.h"
#include "controller/raft_observer_driver.h"
#include "io/kafka_client.h"

namespace samsa {

struct RaftFetchClientOptions {
  std::string cluster_id;
  NodeId self;                   // the observer
  std::vector<RaftPeer> voters;  // their controller listeners
  int64_t connect_timeout_ms = 10'000;
};

class RaftFetchClient final : public RaftFetchTransport {
 public:
  using Receiver = std::function<void(const raft::FetchResponse&)>;

  RaftFetchClient(Runtime& runtime, RaftFetchClientOptions options);
  ~RaftFetchClient() override;

  void set_receiver(Receiver receiver) { receiver_ = std::move(receiver); }
  void send(const raft::FetchRequest& request) override;

  struct Stats {
    uint64_t sent = 0;
    uint64_t answered = 0;
    uint64_t failures = 0;  // connections failed or broken, refusals, answers that did not fit
  };
  const Stats& stats() const { return stats_; }

 private:
  struct Link {
    RaftPeer peer;
    std::unique_ptr<KafkaClient> client;
    uint64_t generation = 0;  // bumped per connection: callbacks of an old one are ignored
  };
  void broken(Link& link, const Error& why);

  Runtime& runtime_;
  RaftFetchClientOptions options_;
  Receiver receiver_;
  std::vector<std::unique_ptr<Link>> links_;
  Stats stats_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace samsa

#include "controller/raft_network_transport.h"

#include <algorithm>

#include "base/assert.h"
#include "base/log.h"
#include "protocol/generated/samsa_raft_push.h"
#include "protocol/generated/vote.h"

namespace samsa {

RaftNetworkTransport::RaftNetworkTransport(Runtime& runtime, RaftNetworkTransportOptions options)
    : runtime_(runtime), options_(std::move(options)), rng_(runtime.seed() ^ 0x7261667477697265ULL) {
  ASSERT(options_.max_queued_per_peer > 0);
  for (const RaftPeer& peer : options_.peers) {
    ASSERT_MSG(peer.id != options_.identity.self, "a raft peer that is this node");
    auto link = std::make_unique<Link>();
    link->peer = peer;
    links_.push_back(std::move(link));
  }
  schedule_timeout_sweep();
}

RaftNetworkTransport::~RaftNetworkTransport() {
  *alive_ = false;
  if (sweep_timer_ != 0) runtime_.cancel_timer(sweep_timer_);
  for (auto& link : links_) {
    if (link->backoff_timer != 0) runtime_.cancel_timer(link->backoff_timer);
  }
}

RaftNetworkTransport::Link* RaftNetworkTransport::link_to(NodeId id) {
  for (auto& link : links_) {
    if (link->peer.id == id) return link.get();
  }
  return nullptr;
}

void RaftNetworkTransport::send(const raft::Message& message) {
  if (is_raft_response(message.type)) {
    // The answer to the request deliver() is running: the Kafka response.
    if (capture_ && message.to == capture_->requester && !capture_->answer) {
      capture_->answer = message;
    } else {
      ++stats_.dropped_other;  // an answer with no request to ride on (Raft resends)
    }
    return;
  }
  Link* link = link_to(message.to);
  if (!link || !fits_raft_message(message)) {
    if (link) LOG_WARN("raft", "dropping {}: larger than {} bytes", message.describe(), kMaxRaftMessageBytes);
    ++stats_.dropped_other;
    return;
  }
  link->queue.push_back(message);
  if (link->queue.size() > options_.max_queued_per_peer) {
    link->queue.pop_front();  // the oldest is the most likely to be stale
    ++stats_.dropped_full;
  }
  post_pump(*link);
}

std::optional<raft::Message> RaftNetworkTransport::deliver(const raft::Message& request) {
  ASSERT_MSG(!capture_, "deliver() inside deliver()");
  if (!receiver_) return std::nullopt;
  capture_ = Capture{request.from, std::nullopt};
  receiver_(request);
  std::optional<raft::Message> answer = std::move(capture_->answer);
  capture_.reset();
  return answer;
}

void RaftNetworkTransport::post_pump(Link& link) {
  if (link.pump_posted) return;
  link.pump_posted = true;
  std::weak_ptr<bool> alive = alive_;
  runtime_.post([this, alive, &link] {
    if (alive.expired()) return;
    link.pump_posted = false;
    pump(link);
  });
}

void RaftNetworkTransport::pump(Link& link) {
  if (!link.connected) {
    if (!link.connecting && link.backoff_timer == 0 && !link.queue.empty()) dial(link);
    return;
  }
  while (link.connected && link.in_flight.size() < kMaxInFlightPerPeer && !link.queue.empty()) {
    raft::Message m = std::move(link.queue.front());
    link.queue.pop_front();
    write_one(link, std::move(m));
  }
}

void RaftNetworkTransport::dial(Link& link) {
  link.connecting = true;
  uint64_t generation = ++link.generation;
  link.client = std::make_unique<KafkaClient>(
      runtime_, "samsa-raft-" + std::to_string(options_.identity.self.value()));
  std::weak_ptr<bool> alive = alive_;
  link.client->connect(link.peer.host, link.peer.port, options_.connect_timeout_ms,
                       [this, alive, &link, generation](Status status) {
                         if (alive.expired() || generation != link.generation) return;
                         link.connecting = false;
                         if (!status.ok()) return broken(link, status.error());
                         link.connected = true;
                         link.consecutive_failures = 0;
                         ++stats_.connects;
                         post_pump(link);
                       });
}

void RaftNetworkTransport::write_one(Link& link, raft::Message message) {
  uint64_t generation = link.generation;
  std::weak_ptr<bool> alive = alive_;
  link.in_flight.push_back(InFlight{message, runtime_.now_ns()});
  ++stats_.sent;
  const std::string& cluster_id = options_.identity.cluster_id;
  if (message.type == raft::MessageType::kVote) {
    link.client->call<protocol::VoteRequest, protocol::VoteResponse>(
        encode_vote_request(message, cluster_id), kVoteVersion,
        [this, alive, &link, generation, request = message](Result<protocol::VoteResponse> response) {
          if (alive.expired() || generation != link.generation) return;
          if (!response.ok()) return broken(link, response.error());
          on_answer(link, generation, decode_vote_response(*response, request));
        });
  } else if (message.type == raft::MessageType::kEndQuorum) {
    link.client->call<protocol::EndQuorumEpochRequest, protocol::EndQuorumEpochResponse>(
        encode_end_quorum_request(message, cluster_id), kEndQuorumEpochVersion,
        [this, alive, &link, generation](Result<protocol::EndQuorumEpochResponse> response) {
          if (alive.expired() || generation != link.generation) return;
          if (!response.ok()) return broken(link, response.error());
          on_answer(link, generation, decode_end_quorum_response(*response));
        });
  } else {
    link.client->call<protocol::SamsaRaftPushRequest, protocol::SamsaRaftPushResponse>(
        encode_push_request(message, cluster_id), kRaftPushVersion,
        [this, alive, &link, generation, request = message](Result<protocol::SamsaRaftPushResponse> response) {
          if (alive.expired() || generation != link.generation) return;
          if (!response.ok()) return broken(link, response.error());
          on_answer(link, generation, decode_push_response(*response, request));
        });
  }
}

void RaftNetworkTransport::on_answer(Link& link, uint64_t generation, Result<std::optional<raft::Message>> answer) {
  ASSERT(!link.in_flight.empty());
  link.in_flight.pop_front();
  if (!answer.ok()) {
    // The peer refused the request (another cluster, not a voter, ...):
    // the connection is fine, the configuration is not.
    LOG_WARN("raft", "node {} refused a request: {}", link.peer.id.value(), answer.error().message());
  } else if (answer->has_value() && receiver_) {
    ++stats_.answered;
    receiver_(**answer);
  }
  if (generation == link.generation) post_pump(link);
}

void RaftNetworkTransport::broken(Link& link, const Error& why) {
  ++stats_.failures;
  if (link.consecutive_failures == 0) {
    LOG_INFO("raft", "connection to node {} ({}:{}) failed: {}", link.peer.id.value(), link.peer.host,
             link.peer.port, why.message());
  }
  ++link.generation;  // what the old client still reports is ignored
  link.connected = false;
  link.connecting = false;
  link.in_flight.clear();  // lost with the connection: Raft resends
  // Not destroyed here: this may run inside one of the client's callbacks.
  std::shared_ptr<KafkaClient> old(std::move(link.client));
  runtime_.post([old] {});
  ++link.consecutive_failures;
  std::weak_ptr<bool> alive = alive_;
  if (link.backoff_timer != 0) runtime_.cancel_timer(link.backoff_timer);
  link.backoff_timer = runtime_.add_timer(backoff_ms(link.consecutive_failures), [this, alive, &link] {
    if (alive.expired()) return;
    link.backoff_timer = 0;
    pump(link);
  });
}

// Kafka's ExponentialBackoff: base * 2^(failures-1), capped, +-20% jitter.
int64_t RaftNetworkTransport::backoff_ms(int failures) {
  int64_t ms = options_.reconnect_backoff_ms;
  for (int i = 1; i < failures && ms < options_.reconnect_backoff_max_ms; ++i) ms *= 2;
  ms = std::min(ms, options_.reconnect_backoff_max_ms);
  int64_t jitter = ms / 5;
  return std::max<int64_t>(1, ms + (jitter > 0 ? rng_.range(-jitter, jitter) : 0));
}

void RaftNetworkTransport::schedule_timeout_sweep() {
  int64_t every = std::max<int64_t>(10, options_.request_timeout_ms / 4);
  std::weak_ptr<bool> alive = alive_;
  sweep_timer_ = runtime_.add_timer(every, [this, alive] {
    if (alive.expired()) return;
    sweep_timer_ = 0;
    sweep_timeouts();
    schedule_timeout_sweep();
  });
}

void RaftNetworkTransport::sweep_timeouts() {
  int64_t now = runtime_.now_ns();
  for (auto& link : links_) {
    if (!link->connected || link->in_flight.empty()) continue;
    if (now - link->in_flight.front().sent_ns > options_.request_timeout_ms * 1'000'000) {
      broken(*link, Error(ErrorKind::kTimedOut, "no answer within controller.quorum.request.timeout.ms"));
    }
  }
}

}  // namespace samsa

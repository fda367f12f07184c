#include "controller/raft_fetch_client.h"

#include "base/log.h"
#include "controller/raft_fetch_wire.h"

namespace samsa {

RaftFetchClient::RaftFetchClient(Runtime& runtime, RaftFetchClientOptions options)
    : runtime_(runtime), options_(std::move(options)) {
  for (const RaftPeer& peer : options_.voters) {
    auto link = std::make_unique<Link>();
    link->peer = peer;
    links_.push_back(std::move(link));
  }
}

RaftFetchClient::~RaftFetchClient() = default;

void RaftFetchClient::send(const raft::FetchRequest& request) {
  Link* link = nullptr;
  for (auto& l : links_) {
    if (l->peer.id == request.to) link = l.get();
  }
  if (link == nullptr) return;  // not a voter we know: the observer times out
  std::weak_ptr<bool> alive = alive_;
  if (!link->client) {
    uint64_t generation = ++link->generation;
    link->client = std::make_unique<KafkaClient>(runtime_, "samsa-observer-" + std::to_string(options_.self.value()));
    // Requests written before the connection is up wait for it.
    link->client->connect(link->peer.host, link->peer.port, options_.connect_timeout_ms,
                          [this, alive, link, generation](Status status) {
                            if (alive.expired() || generation != link->generation) return;
                            if (!status.ok()) broken(*link, status.error());
                          });
  }
  ++stats_.sent;
  uint64_t generation = link->generation;
  link->client->call<protocol::SamsaRaftFetchRequest, protocol::SamsaRaftFetchResponse>(
      encode_fetch_request(request, options_.cluster_id), kRaftFetchVersion,
      [this, alive, link, generation, request](Result<protocol::SamsaRaftFetchResponse> response) {
        if (alive.expired() || generation != link->generation) return;
        if (!response.ok()) return broken(*link, response.error());
        Result<raft::FetchResponse> answer = decode_fetch_response(*response, request);
        if (!answer.ok()) {
          ++stats_.failures;
          LOG_WARN("raft", "node {} refused a fetch: {}", link->peer.id.value(), answer.error().message());
          return;
        }
        ++stats_.answered;
        if (receiver_) receiver_(*answer);
      });
}

void RaftFetchClient::broken(Link& link, const Error& why) {
  ++stats_.failures;
  LOG_DEBUG("raft", "fetch connection to node {} ({}:{}) failed: {}", link.peer.id.value(), link.peer.host,
            link.peer.port, why.message());
  ++link.generation;
  // Not destroyed here: this may run inside one of the client's callbacks.
  std::shared_ptr<KafkaClient> old(std::move(link.client));
  runtime_.post([old] {});
}

}  // namespace samsa

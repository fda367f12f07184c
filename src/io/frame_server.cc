#include "io/frame_server.h"

#include <algorithm>
#include <vector>

#include "base/log.h"

namespace samsa {

Result<std::unique_ptr<FrameServer>> FrameServer::start(Runtime& runtime, const FrameServerOptions& options,
                                                        FrameSink& sink) {
  std::unique_ptr<FrameServer> server(new FrameServer(runtime, options, sink));
  FrameServer* raw = server.get();
  ListenOptions listen;
  listen.host = options.host;
  listen.port = options.port;
  listen.send_buffer_bytes = options.socket_send_buffer_bytes;
  listen.receive_buffer_bytes = options.socket_receive_buffer_bytes;
  ASSIGN_OR_RETURN(server->listener_,
                   runtime.network().listen(listen, [raw](StreamPtr stream) { raw->on_accept(std::move(stream)); }));
  server->schedule_idle_sweep();
  return server;
}

FrameServer::FrameServer(Runtime& runtime, const FrameServerOptions& options, FrameSink& sink)
    : runtime_(runtime), options_(options), sink_(sink) {
  // One budget for all of this server's connections unless the caller shares
  // one across servers (run_server does: the limits are per broker).
  if (!options_.limits.request_bytes) options_.limits.request_bytes = ByteBudget::create(runtime);
  if (!options_.limits.response_bytes) options_.limits.response_bytes = ByteBudget::create(runtime);
  if (!options_.ids) options_.ids = std::make_shared<ConnectionIds>();
}

FrameServer::~FrameServer() { close_all(); }

void FrameServer::close_all() {
  if (idle_timer_ != 0) runtime_.cancel_timer(idle_timer_);
  idle_timer_ = 0;
  listener_.reset();
  // close() calls back into on_closed, which erases from the map: iterate a copy.
  std::vector<std::shared_ptr<KafkaConnection>> all;
  all.reserve(connections_.size());
  for (auto& [id, conn] : connections_) all.push_back(conn);
  for (auto& conn : all) conn->close();
  connections_.clear();
}

void FrameServer::schedule_idle_sweep() {
  int64_t idle = options_.connections_max_idle_ms;
  if (idle <= 0) return;
  int64_t period = std::clamp<int64_t>(idle / 4, 1, 10'000);
  idle_timer_ = runtime_.add_timer(period, [this] {
    idle_timer_ = 0;
    close_idle();
    schedule_idle_sweep();
  });
}

void FrameServer::close_idle() {
  int64_t cutoff = runtime_.now_ms() - options_.connections_max_idle_ms;
  std::vector<std::shared_ptr<KafkaConnection>> idle;
  for (auto& [id, conn] : connections_) {
    if (conn->quiet() && conn->last_activity_ms() <= cutoff) idle.push_back(conn);
  }
  for (auto& conn : idle) {
    LOG_DEBUG("listener", "closing idle connection {} from {}", conn->id(), conn->peer());
    conn->close();
  }
}

void FrameServer::on_accept(StreamPtr stream) {
  if (connections_.size() >= options_.max_connections) {
    LOG_WARN("listener", "refusing connection from {}: {} connections open (max.connections)",
             stream->peer_address(), connections_.size());
    return;  // the stream closes as it goes out of scope
  }
  uint64_t id = options_.ids->next();
  LOG_DEBUG("listener", "connection {} from {}", id, stream->peer_address());
  auto conn = KafkaConnection::open(runtime_, std::move(stream), id, sink_, options_.limits,
                                    [this](uint64_t closed_id) { connections_.erase(closed_id); });
  connections_.emplace(id, std::move(conn));
}

}  // namespace samsa

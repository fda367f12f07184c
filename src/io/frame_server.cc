#include "io/frame_server.h"

#include <sys/socket.h>

#include <algorithm>
#include <vector>

#include "base/log.h"

namespace samsa {

Result<std::unique_ptr<FrameServer>> FrameServer::start(EventLoop& loop, const FrameServerOptions& options,
                                                        FrameSink& sink) {
  std::unique_ptr<FrameServer> server(new FrameServer(loop, options, sink));
  FrameServer* raw = server.get();
  ASSIGN_OR_RETURN(server->listener_,
                   TcpListener::listen(loop, options.host, options.port, [raw](UniqueFd fd, std::string peer) {
                     raw->on_accept(std::move(fd), std::move(peer));
                   }));
  server->schedule_idle_sweep();
  return server;
}

FrameServer::FrameServer(EventLoop& loop, const FrameServerOptions& options, FrameSink& sink)
    : loop_(loop), options_(options), sink_(sink) {
  // One budget for all of this server's connections unless the caller shares
  // one across servers (run_server does: the limits are per process).
  if (!options_.limits.request_bytes) options_.limits.request_bytes = ByteBudget::create(loop);
  if (!options_.limits.response_bytes) options_.limits.response_bytes = ByteBudget::create(loop);
}

FrameServer::~FrameServer() { close_all(); }

void FrameServer::close_all() {
  if (idle_timer_ != 0) loop_.cancel_timer(idle_timer_);
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
  idle_timer_ = loop_.add_timer(period, [this] {
    idle_timer_ = 0;
    close_idle();
    schedule_idle_sweep();
  });
}

void FrameServer::close_idle() {
  int64_t cutoff = loop_.now_ms() - options_.connections_max_idle_ms;
  std::vector<std::shared_ptr<KafkaConnection>> idle;
  for (auto& [id, conn] : connections_) {
    if (conn->quiet() && conn->last_activity_ms() <= cutoff) idle.push_back(conn);
  }
  for (auto& conn : idle) {
    LOG_DEBUG("listener", "closing idle connection {} from {}", conn->id(), conn->peer());
    conn->close();
  }
}

void FrameServer::on_accept(UniqueFd socket, std::string peer) {
  if (connections_.size() >= options_.max_connections) {
    LOG_WARN("listener", "refusing connection from {}: {} connections open (max.connections)", peer,
             connections_.size());
    return;  // socket closes as it goes out of scope
  }
  if (options_.socket_send_buffer_bytes > 0) {
    ::setsockopt(socket.get(), SOL_SOCKET, SO_SNDBUF, &options_.socket_send_buffer_bytes, sizeof(int));
  }
  if (options_.socket_receive_buffer_bytes > 0) {
    ::setsockopt(socket.get(), SOL_SOCKET, SO_RCVBUF, &options_.socket_receive_buffer_bytes, sizeof(int));
  }
  uint64_t id = next_connection_id();
  auto conn = KafkaConnection::open(loop_, std::move(socket), peer, id, sink_, options_.limits,
                                    [this](uint64_t closed_id) { connections_.erase(closed_id); });
  if (!conn.ok()) {
    LOG_WARN("listener", "cannot register connection from {}: {}", peer, conn.error().to_string());
    return;
  }
  LOG_DEBUG("listener", "connection {} from {}", id, peer);
  connections_.emplace(id, std::move(conn).value());
}

}  // namespace samsa

#pragma once
// FrameServer: one Kafka listener. Accepts connections on host:port through
// the runtime's Network (sockets, or the simulator's) and runs a
// KafkaConnection for each, all feeding the same FrameSink.
//
// Limits: at most `max_connections` open connections (max.connections);
// a connection accepted beyond that is closed at once with a LOG_WARN.
// A connection with no request in progress, nothing to write and no bytes
// moved for `connections_max_idle_ms` (connections.max.idle.ms) is closed
// (checked every idle/4, at least every 10 s; <= 0 disables).
// Loop-thread only; the sink must outlive the server. Destruction (or
// close_all()) closes every connection, calling the sink's on_close() for each.
// Request and response bytes are budgeted across connections through
// options.limits (see kafka_connection.h); without budgets given, the server
// makes unbounded ones of its own. Connection ids come from options.ids,
// which servers sharing a sink and budgets share (run_server's listeners);
// without one, the server numbers its own connections from 1.

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "base/result.h"
#include "io/frame_sink.h"
#include "io/kafka_connection.h"
#include "io/network.h"
#include "io/runtime.h"

namespace samsa {

// Connection ids (never 0), unique among the servers that share one. Loop-
// thread only, like the servers.
class ConnectionIds {
 public:
  uint64_t next() { return next_++; }

 private:
  uint64_t next_ = 1;
};

struct FrameServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  KafkaConnectionLimits limits;
  size_t max_connections = size_t(-1);
  int socket_send_buffer_bytes = -1;     // socket.send.buffer.bytes; -1 = OS default
  int socket_receive_buffer_bytes = -1;  // socket.receive.buffer.bytes; -1 = OS default
  int64_t connections_max_idle_ms = 600000;
  std::shared_ptr<ConnectionIds> ids;
};

class FrameServer {
 public:
  static Result<std::unique_ptr<FrameServer>> start(Runtime& runtime, const FrameServerOptions& options,
                                                    FrameSink& sink);
  ~FrameServer();
  FrameServer(const FrameServer&) = delete;
  FrameServer& operator=(const FrameServer&) = delete;

  // The bound port (the real one when options.port was 0).
  uint16_t port() const { return listener_->port(); }
  const std::string& address() const { return listener_->address(); }
  size_t connection_count() const { return connections_.size(); }

  // Stops accepting and closes every connection.
  void close_all();

 private:
  FrameServer(Runtime& runtime, const FrameServerOptions& options, FrameSink& sink);
  void on_accept(StreamPtr stream);
  void schedule_idle_sweep();
  void close_idle();

  Runtime& runtime_;
  FrameServerOptions options_;
  FrameSink& sink_;
  std::unique_ptr<Listener> listener_;
  std::unordered_map<uint64_t, std::shared_ptr<KafkaConnection>> connections_;
  TimerId idle_timer_ = 0;
};

}  // namespace samsa

#pragma once
// KafkaConnection: Kafka's framing on one TCP connection.
//
// Input is a stream of frames, each an int32 big-endian size followed by that
// many bytes (request header + body). Each complete frame is copied into its
// own heap buffer and handed to the FrameSink with a per-connection sequence
// number; replies are written strictly in sequence order (see frame_sink.h).
//
// Limits, with their behaviour when reached:
// - a size < 0 or > max_request_bytes (socket.request.max.bytes): LOG_WARN
//   naming the peer, then close (the stream cannot be resynchronised);
// - max_in_flight (queued.max.requests) frames handed out but not yet
//   answered and flushed to the socket queue: stop reading the socket until
//   one is answered (back-pressure through TCP);
// - max_queued_write_bytes of responses waiting for a slow reader: stop
//   reading requests until the socket drains.
// End of stream (also in the middle of a frame) closes quietly.
//
// Reading is in chunks of up to 64 KiB, split into frames in user space, so a
// burst of small pipelined requests costs one syscall; a large frame, once its
// size is known, is read straight into its own buffer (the previous large
// frame's buffer, when the sink has released it: one per connection, at
// most 2 MiB, so steady produce traffic allocates and zeroes nothing).
//
// Lifetime: owned by a shared_ptr (reply callbacks hold weak_ptrs). When it
// closes, it calls the sink's on_close() and then `on_closed` (the owner
// drops it then; the object keeps itself alive until a posted task runs, so
// dropping it from inside a callback is safe). Loop-thread only.

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "base/bytes.h"
#include "base/result.h"
#include "io/event_loop.h"
#include "io/frame_sink.h"
#include "io/tcp_connection.h"

namespace samsa {

struct KafkaConnectionLimits {
  int32_t max_request_bytes = 104857600;          // socket.request.max.bytes
  size_t max_in_flight = 500;                      // queued.max.requests
  size_t max_queued_write_bytes = 64 * 1024 * 1024;
};

class KafkaConnection final : public TcpConnection::Observer,
                              public std::enable_shared_from_this<KafkaConnection> {
 public:
  using ClosedFn = std::function<void(uint64_t connection_id)>;

  static Result<std::shared_ptr<KafkaConnection>> open(EventLoop& loop, UniqueFd socket, std::string peer,
                                                       uint64_t id, FrameSink& sink,
                                                       const KafkaConnectionLimits& limits, ClosedFn on_closed);
  ~KafkaConnection() override;

  // Closes at once, dropping unsent replies. Idempotent.
  void close();

  uint64_t id() const { return id_; }
  const std::string& peer() const { return peer_; }
  bool closed() const { return closed_; }
  // Frames handed to the sink whose replies have not yet been queued.
  size_t in_flight() const { return slots_.size(); }
  bool reading_paused() const { return paused_; }
  // Nothing handed out, nothing waiting to be written.
  bool quiet() const { return slots_.empty() && !(tcp_ && tcp_->has_queued()); }
  // Loop time of the last byte read or written (connections.max.idle.ms).
  int64_t last_activity_ms() const { return last_activity_ms_; }

  void on_readable() override;
  void on_drained() override;
  void on_error(const Error& error) override;

 private:
  KafkaConnection(EventLoop& loop, std::string peer, uint64_t id, FrameSink& sink,
                  const KafkaConnectionLimits& limits, ClosedFn on_closed);
  bool read_once();
  void dispatch_buffered();
  void emit(std::shared_ptr<Bytes> frame);
  std::shared_ptr<Bytes> take_big_buffer(size_t size);
  void complete(uint64_t sequence, Reply reply);
  void pump_replies();
  void update_pause();
  void make_room();

  EventLoop& loop_;
  std::unique_ptr<TcpConnection> tcp_;
  std::string peer_;
  uint64_t id_;
  FrameSink& sink_;
  KafkaConnectionLimits limits_;
  ClosedFn on_closed_;

  // Read side: rbuf_[rstart_, rend_) holds received bytes not yet framed;
  // big_ holds a large frame being read straight into its own buffer.
  Bytes rbuf_;
  size_t rstart_ = 0;
  size_t rend_ = 0;
  std::shared_ptr<Bytes> big_;
  size_t big_filled_ = 0;
  // The last large frame, reused for the next once the sink released it.
  std::shared_ptr<Bytes> spare_;

  // Reply side: one slot per frame handed out, front = oldest.
  std::deque<std::optional<Reply>> slots_;
  uint64_t first_seq_ = 0;  // sequence of slots_.front()
  uint64_t next_seq_ = 0;

  int64_t last_activity_ms_ = 0;
  bool paused_ = false;
  bool closing_ = false;  // kClose seen: flush, then close
  bool closed_ = false;
  bool dispatching_ = false;
};

// Process-wide unique connection ids (never 0).
uint64_t next_connection_id();

}  // namespace samsa

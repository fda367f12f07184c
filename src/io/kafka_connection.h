#pragma once
// KafkaConnection: Kafka's framing on one connection (a Connection over any
// Stream: a socket, or the simulator's).
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
// - request bytes (queued.max.request.bytes, shared by all connections, see
//   byte_budget.h): a frame's bytes are charged as they arrive and stay
//   charged until the sink drops its last reference to the frame. Refused,
//   the connection stops reading until bytes are released; a connection in
//   the middle of a frame takes the budget's overdraft instead (one at a
//   time), so some request can always be finished;
// - max_queued_write_bytes (queued.max.response.bytes.per.connection) of
//   responses waiting for a slow reader (queued on the socket, or finished
//   but waiting behind an earlier one): stop reading requests until the
//   socket drains below it;
// - response memory (queued.max.response.bytes, shared): while it is
//   exhausted, a connection with response bytes in memory not yet written
//   stops reading requests until its queue drains (Kafka mutes such a
//   channel); connections whose responses go out keep being served.
// End of stream (also in the middle of a frame) closes quietly.
//
// Memory follows the bytes that arrive, never the size prefix alone: reads
// are in chunks of up to 64 KiB, split into frames in user space, so a burst
// of small pipelined requests costs one syscall; a large frame is read
// straight into its own buffer, which grows as its bytes arrive (doubling
// from 64 KiB, then in 1 MiB steps; capacity doubles, so growth stays
// amortised O(1)), zeroing only the room the next read() fills. The previous
// large frame's buffer is reused once the sink has released it (one per
// connection, at most 2 MiB), so steady produce traffic allocates and zeroes
// nothing.
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
#include "io/byte_budget.h"
#include "io/connection.h"
#include "io/frame_sink.h"
#include "io/runtime.h"

namespace samsa {

struct KafkaConnectionLimits {
  int32_t max_request_bytes = 104857600;           // socket.request.max.bytes
  size_t max_in_flight = 500;                      // queued.max.requests
  size_t max_queued_write_bytes = 16 * 1024 * 1024;  // queued.max.response.bytes.per.connection
  // Shared by every connection of the process; null: the connection makes
  // its own, unbounded.
  std::shared_ptr<ByteBudget> request_bytes;   // queued.max.request.bytes
  std::shared_ptr<ByteBudget> response_bytes;  // queued.max.response.bytes
};

class KafkaConnection final : public Connection::Observer,
                              public std::enable_shared_from_this<KafkaConnection> {
 public:
  using ClosedFn = std::function<void(uint64_t connection_id)>;

  // `id` is unique among the connections sharing `limits`' budgets and the
  // sink (never 0): the owner hands them out (FrameServer, ConnectionIds).
  static std::shared_ptr<KafkaConnection> open(Runtime& runtime, StreamPtr stream, uint64_t id, FrameSink& sink,
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
  KafkaConnection(Runtime& runtime, std::string peer, uint64_t id, FrameSink& sink,
                  const KafkaConnectionLimits& limits, ClosedFn on_closed);
  bool read_once();
  void dispatch_buffered();
  bool can_dispatch() const;
  void emit(std::shared_ptr<Bytes> frame, size_t charged);
  bool start_big(size_t declared, const uint8_t* have, size_t have_size);
  bool grow_big();
  void finish_big();
  bool charge_request_bytes(size_t n, bool mid_frame);
  void wait_for_request_budget();
  void on_request_budget();
  bool responses_backlogged() const;
  void hold_reply(const Reply& reply);
  void unhold_reply(const Reply& reply);
  void release_held();
  void complete(uint64_t sequence, Reply reply);
  void pump_replies();
  void update_pause();
  bool should_pause() const;
  void make_room();

  Runtime& runtime_;
  std::unique_ptr<Connection> tcp_;
  std::string peer_;
  uint64_t id_;
  FrameSink& sink_;
  KafkaConnectionLimits limits_;
  ClosedFn on_closed_;

  std::shared_ptr<ByteBudget> requests_;
  std::shared_ptr<ByteBudget> responses_;

  // Read side: rbuf_[rstart_, rend_) holds received bytes not yet framed;
  // big_ holds a large frame being read straight into its own buffer:
  // big_->size() bytes committed (and charged to requests_), the first
  // big_filled_ of them received, big_declared_ in the whole frame.
  Bytes rbuf_;
  size_t rstart_ = 0;
  size_t rend_ = 0;
  std::shared_ptr<Bytes> big_;
  size_t big_filled_ = 0;
  size_t big_declared_ = 0;
  // The last large frame, reused for the next once the sink released it.
  std::shared_ptr<Bytes> spare_;
  ByteBudget::WaiterId budget_waiter_ = 0;  // != 0: waiting for requests_

  // Reply side: one slot per frame handed out, front = oldest. Finished
  // replies waiting in a slot count as unsent (held_*), like queued ones.
  std::deque<std::optional<Reply>> slots_;
  size_t held_bytes_ = 0;
  size_t held_memory_bytes_ = 0;
  uint64_t first_seq_ = 0;  // sequence of slots_.front()
  uint64_t next_seq_ = 0;

  int64_t last_activity_ms_ = 0;
  bool paused_ = false;
  bool closing_ = false;  // kClose seen: flush, then close
  bool closed_ = false;
  bool dispatching_ = false;
};

}  // namespace samsa

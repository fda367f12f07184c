#pragma once
// Network: listening, accepting and dialing byte streams, behind one
// interface with a real implementation (epoll sockets, io/posix_network.*)
// and a simulated one (testing/: latency, loss, duplication, reordering,
// partitions one-way and two-way, resets, refused connects).
//
// A Stream is readiness-based, like a nonblocking socket: the owner sets
// its interest (readable, writable), is told when the stream is ready, and
// then reads or writes until kWouldBlock. The queueing above it (ordered
// replies, corking, memory budgets, file regions) is written once, in
// io/connection.*, over any Stream.
//
// Loop-thread only: every callback runs on the runtime's loop, never inside
// the call that caused it (no re-entrancy). A Stream or Listener must be
// destroyed on the loop thread; destruction closes it and cancels every
// callback still due.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/bytes.h"
#include "base/file.h"
#include "base/result.h"

namespace samsa {

struct IoResult {
  enum class Status { kDone, kWouldBlock, kEof, kError };
  Status status = Status::kDone;
  size_t bytes = 0;  // transferred, for kDone (> 0)
  int err = 0;       // errno, for kError (ECONNRESET, EPIPE, ...)
};

class Stream {
 public:
  class Handler {
   public:
    virtual ~Handler() = default;
    // The stream may be read (data, end of stream or an error waits) or
    // written (room in the send buffer), for the interests set. `hangup`:
    // the peer is gone or the connection failed; reads drain what is left.
    virtual void on_stream_ready(bool readable, bool writable, bool hangup) = 0;
  };
  virtual ~Stream() = default;

  // The handler must outlive the stream (or be replaced by nullptr).
  virtual void set_handler(Handler* handler) = 0;
  virtual void set_interest(bool readable, bool writable) = 0;

  virtual IoResult read(uint8_t* dst, size_t capacity) = 0;
  // Gathers up to `count` pieces in order, as one sendmsg would.
  virtual IoResult write(const ByteView* pieces, size_t count) = 0;
  // Sends [position, position + size) of `file` (sendfile in the real one).
  // kEof: the file ends at or before `position` (truncated underneath).
  virtual IoResult send_file(const File& file, int64_t position, size_t size) = 0;

  // Closes at once; unsent bytes are dropped. Idempotent.
  virtual void close() = 0;
  virtual bool closed() const = 0;
  virtual const std::string& peer_address() const = 0;   // "ip:port"
  virtual const std::string& local_address() const = 0;  // "ip:port"
};

using StreamPtr = std::unique_ptr<Stream>;

class Listener {
 public:
  virtual ~Listener() = default;  // stops accepting
  virtual uint16_t port() const = 0;               // the real one if 0 was asked
  virtual const std::string& address() const = 0;  // "ip:port" bound
};

struct ListenOptions {
  std::string host = "127.0.0.1";  // empty: every interface
  uint16_t port = 0;               // 0: ephemeral
  int send_buffer_bytes = -1;      // socket.send.buffer.bytes; -1 = OS default
  int receive_buffer_bytes = -1;   // socket.receive.buffer.bytes; -1 = OS default
};

using ConnectId = uint64_t;

class Network {
 public:
  virtual ~Network() = default;
  using AcceptFn = std::function<void(StreamPtr stream)>;
  virtual Result<std::unique_ptr<Listener>> listen(const ListenOptions& options, AcceptFn on_accept) = 0;

  // Dials host:port. `done` runs once, later, on the loop thread: with the
  // connected stream, or with the error (refused, unreachable, reset, or
  // ErrorKind::kTimedOut after `timeout_ms`).
  using ConnectFn = std::function<void(Result<StreamPtr> stream)>;
  virtual ConnectId connect(const std::string& host, uint16_t port, int64_t timeout_ms, ConnectFn done) = 0;
  // `done` will not run; a stream connected meanwhile is closed. No-op when
  // it already ran.
  virtual void cancel_connect(ConnectId id) = 0;
};

}  // namespace samsa

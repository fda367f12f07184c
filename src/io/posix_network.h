#pragma once
// The real Network (io/network.h): nonblocking TCP sockets on an EventLoop.
//
// PosixStream: one connected socket. read() is recv(); write() is one
// sendmsg() gathering the pieces given (at most IOV_MAX of them);
// send_file() is sendfile() from file.native_handle(), or, for a File
// without a descriptor (the simulated disk), read_at() into a bounce buffer
// and one send(). Interest maps to EPOLLIN/EPOLLOUT (level-triggered, so a
// handler that does not drain is told again); EPOLLHUP/EPOLLERR arrive as
// `hangup`, watched or not. A stream with no handler that hangs up stops
// being watched until an interest is set again (no busy loop).
//
// PosixListener: binds host:port with SO_REUSEADDR (a restarted broker
// rebinds at once), accepts every pending connection per wake-up as a
// nonblocking, close-on-exec socket with TCP_NODELAY and the configured
// socket.send.buffer.bytes / socket.receive.buffer.bytes, and pauses
// accepting for 100 ms when the process is out of descriptors (EMFILE,
// ENFILE, ENOBUFS, ENOMEM) instead of spinning on the pending connection.
//
// PosixNetwork::connect: resolves host (getaddrinfo, synchronously: meant for
// numeric addresses and /etc/hosts names), dials the first address with a
// nonblocking connect(), and reports the outcome on the loop: the stream,
// errno_error (ECONNREFUSED, ENETUNREACH, EHOSTUNREACH, ...) or
// ErrorKind::kTimedOut once `timeout_ms` passed. An outcome known at once is
// still delivered later (posted), never inside connect().
//
// Loop-thread only; the loop must outlive every object here.

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "base/bytes.h"
#include "io/event_loop.h"
#include "io/network.h"
#include "io/unique_fd.h"

namespace samsa {

class PosixStream final : public Stream, public IoHandler {
 public:
  // Registers `socket` (connected, nonblocking) with the loop, no interest.
  static Result<std::unique_ptr<PosixStream>> adopt(EventLoop& loop, UniqueFd socket);
  ~PosixStream() override;

  void set_handler(Handler* handler) override { handler_ = handler; }
  void set_interest(bool readable, bool writable) override;
  IoResult read(uint8_t* dst, size_t capacity) override;
  IoResult write(const ByteView* pieces, size_t count) override;
  IoResult send_file(const File& file, int64_t position, size_t size) override;
  void close() override;
  bool closed() const override { return !fd_.valid(); }
  const std::string& peer_address() const override { return peer_; }
  const std::string& local_address() const override { return local_; }

  void on_io(uint32_t events) override;

 private:
  PosixStream(EventLoop& loop, UniqueFd socket);
  IoResult send_file_copy(const File& file, int64_t position, size_t size);
  void watch(uint32_t events);

  EventLoop& loop_;
  UniqueFd fd_;
  std::string peer_;
  std::string local_;
  Handler* handler_ = nullptr;
  IoToken token_ = 0;  // 0: not registered with the loop
  uint32_t events_ = 0;
  Bytes bounce_;  // send_file() of a File without a descriptor
};

class PosixListener final : public Listener, public IoHandler {
 public:
  static Result<std::unique_ptr<PosixListener>> listen(EventLoop& loop, const ListenOptions& options,
                                                       Network::AcceptFn on_accept);
  ~PosixListener() override;

  uint16_t port() const override { return port_; }
  const std::string& address() const override { return address_; }

  void on_io(uint32_t events) override;

 private:
  PosixListener(EventLoop& loop, UniqueFd fd, const ListenOptions& options, Network::AcceptFn on_accept);
  void pause_accepting();
  void accepted(UniqueFd socket);

  EventLoop& loop_;
  UniqueFd fd_;
  ListenOptions options_;
  Network::AcceptFn on_accept_;
  IoToken token_ = 0;
  uint16_t port_ = 0;
  std::string address_;
  TimerId resume_timer_ = 0;
};

class PosixNetwork final : public Network {
 public:
  explicit PosixNetwork(EventLoop& loop);
  // Pending connects are abandoned: their sockets close, `done` never runs.
  ~PosixNetwork() override;
  PosixNetwork(const PosixNetwork&) = delete;
  PosixNetwork& operator=(const PosixNetwork&) = delete;

  Result<std::unique_ptr<Listener>> listen(const ListenOptions& options, AcceptFn on_accept) override;
  ConnectId connect(const std::string& host, uint16_t port, int64_t timeout_ms, ConnectFn done) override;
  void cancel_connect(ConnectId id) override;

  size_t pending_connects() const { return pending_.size(); }

 private:
  class PendingConnect;
  void finish(ConnectId id, Result<StreamPtr> outcome);
  void fail_soon(ConnectId id, Error error);

  EventLoop& loop_;
  // Posted outcomes check it: a task that outlives the network does nothing.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  ConnectId next_id_ = 1;
  std::unordered_map<ConnectId, std::unique_ptr<PendingConnect>> pending_;
};

// "ip:port" of a socket's peer / local end ("?" if unknown).
std::string peer_address(int fd);
std::string local_address(int fd);

// The process must not die of SIGPIPE when a peer resets a connection during
// sendfile(); call once at startup (run_server and tests do).
void ignore_sigpipe();

}  // namespace samsa

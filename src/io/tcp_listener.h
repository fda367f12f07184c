#pragma once
// TcpListener: a nonblocking listening socket on an EventLoop.
//
// Binds host:port (empty host = all interfaces; port 0 = ephemeral, see
// port()), with SO_REUSEADDR so a restarted broker can rebind at once. Each
// accepted connection is handed to `on_accept` as a nonblocking, close-on-exec
// socket with TCP_NODELAY set, plus the peer address as "ip:port".
// Loop-thread only. Destruction stops accepting and closes the socket.
// When the process runs out of descriptors (EMFILE/ENFILE) accepting pauses
// for a moment instead of spinning on the still-pending connection.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/result.h"
#include "io/event_loop.h"
#include "io/posix_network.h"
#include "io/unique_fd.h"

namespace samsa {

class TcpListener final : public IoHandler {
 public:
  using AcceptFn = std::function<void(UniqueFd socket, std::string peer)>;

  static Result<std::unique_ptr<TcpListener>> listen(EventLoop& loop, const std::string& host, uint16_t port,
                                                     AcceptFn on_accept);
  ~TcpListener() override;

  uint16_t port() const { return port_; }
  // The bound address as "ip:port".
  const std::string& address() const { return address_; }

  void on_io(uint32_t events) override;

 private:
  TcpListener(EventLoop& loop, UniqueFd fd, AcceptFn on_accept);
  void pause_accepting();

  EventLoop& loop_;
  UniqueFd fd_;
  AcceptFn on_accept_;
  IoToken token_ = 0;
  uint16_t port_ = 0;
  std::string address_;
  TimerId resume_timer_ = 0;
};

}  // namespace samsa

#include "io/tcp_listener.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "base/log.h"

namespace samsa {
namespace {

constexpr int kBacklog = 1024;
constexpr int64_t kAcceptPauseMs = 100;

std::string format_address(const sockaddr_storage& ss) {
  char buf[INET6_ADDRSTRLEN] = "?";
  if (ss.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
    ::inet_ntop(AF_INET, &a->sin_addr, buf, sizeof buf);
    return std::string(buf) + ":" + std::to_string(ntohs(a->sin_port));
  }
  if (ss.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    ::inet_ntop(AF_INET6, &a->sin6_addr, buf, sizeof buf);
    return "[" + std::string(buf) + "]:" + std::to_string(ntohs(a->sin6_port));
  }
  return "?";
}

uint16_t port_of(const sockaddr_storage& ss) {
  if (ss.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&ss)->sin_port);
  if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_port);
  return 0;
}

Result<UniqueFd> bind_socket(const std::string& host, uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  std::string service = std::to_string(port);
  int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &res);
  if (rc != 0) {
    return Error(ErrorKind::kInvalidArgument, "cannot resolve listener host '" + host + "': " + ::gai_strerror(rc));
  }
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> guard(res, &::freeaddrinfo);
  Error last(ErrorKind::kIo, "no address for '" + host + "'");
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    UniqueFd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol));
    if (!fd.valid()) {
      last = errno_error("socket", errno);
      continue;
    }
    int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    std::string where = host + ":" + service;
    if (::bind(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0) {
      last = errno_error("bind " + where, errno);
      continue;
    }
    if (::listen(fd.get(), kBacklog) != 0) {
      last = errno_error("listen " + where, errno);
      continue;
    }
    return fd;
  }
  return last;
}

}  // namespace

Result<std::unique_ptr<TcpListener>> TcpListener::listen(EventLoop& loop, const std::string& host, uint16_t port,
                                                         AcceptFn on_accept) {
  ASSIGN_OR_RETURN(UniqueFd fd, bind_socket(host, port));
  std::unique_ptr<TcpListener> listener(new TcpListener(loop, std::move(fd), std::move(on_accept)));
  ASSIGN_OR_RETURN(listener->token_, loop.add_fd(listener->fd_.get(), EPOLLIN, listener.get()));
  return listener;
}

TcpListener::TcpListener(EventLoop& loop, UniqueFd fd, AcceptFn on_accept)
    : loop_(loop), fd_(std::move(fd)), on_accept_(std::move(on_accept)) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  ::getsockname(fd_.get(), reinterpret_cast<sockaddr*>(&ss), &len);
  port_ = port_of(ss);
  address_ = format_address(ss);
}

TcpListener::~TcpListener() {
  if (resume_timer_ != 0) loop_.cancel_timer(resume_timer_);
  if (token_ != 0) loop_.remove_fd(fd_.get(), token_);
}

void TcpListener::pause_accepting() {
  // Level-triggered epoll would report the pending connection again at once;
  // stop watching until descriptors may have been freed.
  if (!loop_.modify_fd(fd_.get(), token_, 0).ok()) return;
  resume_timer_ = loop_.add_timer(kAcceptPauseMs, [this] {
    resume_timer_ = 0;
    (void)loop_.modify_fd(fd_.get(), token_, EPOLLIN);
  });
}

void TcpListener::on_io(uint32_t /*events*/) {
  // Accept everything pending: one wake-up can carry a burst of connections.
  for (;;) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    int fd = ::accept4(fd_.get(), reinterpret_cast<sockaddr*>(&ss), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      int err = errno;
      if (err == EAGAIN || err == EWOULDBLOCK) return;
      if (err == EINTR || err == ECONNABORTED || err == EPROTO) continue;
      if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
        LOG_WARN("listener", "accept on {} failed: {}; pausing accepts for {} ms", address_, std::strerror(err),
                 kAcceptPauseMs);
        pause_accepting();
        return;
      }
      LOG_ERROR("listener", "accept on {} failed: {}", address_, std::strerror(err));
      return;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    on_accept_(UniqueFd(fd), format_address(ss));
  }
}

}  // namespace samsa

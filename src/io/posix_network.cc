#include "io/posix_network.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "base/log.h"

namespace samsa {
namespace {

constexpr int kBacklog = 1024;
constexpr int64_t kAcceptPauseMs = 100;
// sendfile moves at most ~2 GiB per call; regions are int32-sized anyway.
constexpr size_t kMaxSendfileChunk = size_t(1) << 30;
// send_file() of a File without a descriptor copies at most this per call.
constexpr size_t kBounceBytes = 64 * 1024;

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

using AddrInfoPtr = std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)>;

Result<AddrInfoPtr> resolve(const std::string& host, uint16_t port, int flags) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = flags | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  std::string service = std::to_string(port);
  int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &res);
  if (rc != 0) {
    return Error(ErrorKind::kInvalidArgument, "cannot resolve host '" + host + "': " + ::gai_strerror(rc));
  }
  return AddrInfoPtr(res, &::freeaddrinfo);
}

Result<UniqueFd> bind_socket(const std::string& host, uint16_t port) {
  ASSIGN_OR_RETURN(AddrInfoPtr res, resolve(host, port, AI_PASSIVE));
  std::string where = host + ":" + std::to_string(port);
  Error last(ErrorKind::kIo, "no address for '" + host + "'");
  for (addrinfo* ai = res.get(); ai != nullptr; ai = ai->ai_next) {
    UniqueFd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol));
    if (!fd.valid()) {
      last = errno_error("socket", errno);
      continue;
    }
    int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
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

void set_nodelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

IoResult io_error(int err) {
  if (err == EAGAIN || err == EWOULDBLOCK) return {IoResult::Status::kWouldBlock, 0, 0};
  return {IoResult::Status::kError, 0, err};
}

}  // namespace

std::string peer_address(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?";
  return format_address(ss);
}

std::string local_address(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?";
  return format_address(ss);
}

void ignore_sigpipe() { ::signal(SIGPIPE, SIG_IGN); }

// ---- PosixStream -----------------------------------------------------------

Result<std::unique_ptr<PosixStream>> PosixStream::adopt(EventLoop& loop, UniqueFd socket) {
  std::unique_ptr<PosixStream> stream(new PosixStream(loop, std::move(socket)));
  ASSIGN_OR_RETURN(stream->token_, loop.add_fd(stream->fd_.get(), 0, stream.get()));
  return stream;
}

PosixStream::PosixStream(EventLoop& loop, UniqueFd socket)
    : loop_(loop), fd_(std::move(socket)), peer_(samsa::peer_address(fd_.get())),
      local_(samsa::local_address(fd_.get())) {}

PosixStream::~PosixStream() { close(); }

void PosixStream::close() {
  if (!fd_.valid()) return;
  if (token_ != 0) loop_.remove_fd(fd_.get(), token_);
  token_ = 0;
  fd_.reset();
}

void PosixStream::watch(uint32_t events) {
  if (token_ == 0) {
    auto token = loop_.add_fd(fd_.get(), events, this);
    // ADD fails only for a descriptor epoll cannot watch, which a socket is not.
    ASSERT_MSG(token.ok(), "epoll_ctl(ADD) of a socket failed");
    token_ = *token;
  } else {
    // MOD can only fail if the fd is gone, which close() rules out.
    (void)loop_.modify_fd(fd_.get(), token_, events);
  }
  events_ = events;
}

void PosixStream::set_interest(bool readable, bool writable) {
  if (!fd_.valid()) return;
  uint32_t want = (readable ? uint32_t(EPOLLIN) : 0u) | (writable ? uint32_t(EPOLLOUT) : 0u);
  if (want == events_ && token_ != 0) return;
  watch(want);
}

void PosixStream::on_io(uint32_t events) {
  bool hangup = events & (EPOLLHUP | EPOLLERR);
  if (handler_ == nullptr) {
    // Level-triggered epoll reports a hang-up even with no interest: stop
    // watching until someone sets an interest again.
    if (hangup && token_ != 0) {
      loop_.remove_fd(fd_.get(), token_);
      token_ = 0;
    }
    return;
  }
  bool readable = events & (EPOLLIN | EPOLLRDHUP);
  bool writable = events & EPOLLOUT;
  handler_->on_stream_ready(readable, writable, hangup);
}

IoResult PosixStream::read(uint8_t* dst, size_t capacity) {
  if (!fd_.valid()) return {IoResult::Status::kError, 0, EBADF};
  for (;;) {
    ssize_t n = ::recv(fd_.get(), dst, capacity, MSG_DONTWAIT);
    if (n > 0) return {IoResult::Status::kDone, size_t(n), 0};
    if (n == 0) return {IoResult::Status::kEof, 0, 0};
    if (errno != EINTR) return io_error(errno);
  }
}

IoResult PosixStream::write(const ByteView* pieces, size_t count) {
  if (!fd_.valid()) return {IoResult::Status::kError, 0, EBADF};
  iovec iov[IOV_MAX];
  size_t n_iov = std::min<size_t>(count, IOV_MAX);
  for (size_t i = 0; i < n_iov; ++i) {
    iov[i].iov_base = const_cast<uint8_t*>(pieces[i].data());
    iov[i].iov_len = pieces[i].size();
  }
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = n_iov;
  for (;;) {
    ssize_t n = ::sendmsg(fd_.get(), &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) return {IoResult::Status::kDone, size_t(n), 0};
    if (n == 0) return {IoResult::Status::kWouldBlock, 0, 0};  // only for empty pieces
    if (errno != EINTR) return io_error(errno);
  }
}

IoResult PosixStream::send_file(const File& file, int64_t position, size_t size) {
  if (!fd_.valid()) return {IoResult::Status::kError, 0, EBADF};
  int in_fd = file.native_handle();
  if (in_fd < 0) return send_file_copy(file, position, size);
  for (;;) {
    off_t offset = off_t(position);
    ssize_t n = ::sendfile(fd_.get(), in_fd, &offset, std::min(size, kMaxSendfileChunk));
    if (n > 0) return {IoResult::Status::kDone, size_t(n), 0};
    if (n == 0) return {IoResult::Status::kEof, 0, 0};  // the file ends before the range does
    if (errno != EINTR) return io_error(errno);
  }
}

// The file's bytes through user space: read what one send can take, send
// it; what the socket did not take is read again on the next call.
IoResult PosixStream::send_file_copy(const File& file, int64_t position, size_t size) {
  if (bounce_.empty()) bounce_.resize(kBounceBytes);
  auto got = file.read_at(bounce_.data(), std::min(size, bounce_.size()), position);
  if (!got.ok()) return {IoResult::Status::kError, 0, EIO};
  if (*got == 0) return {IoResult::Status::kEof, 0, 0};
  ByteView piece(bounce_.data(), *got);
  return write(&piece, 1);
}

// ---- PosixListener ---------------------------------------------------------

Result<std::unique_ptr<PosixListener>> PosixListener::listen(EventLoop& loop, const ListenOptions& options,
                                                             Network::AcceptFn on_accept) {
  ASSIGN_OR_RETURN(UniqueFd fd, bind_socket(options.host, options.port));
  std::unique_ptr<PosixListener> listener(new PosixListener(loop, std::move(fd), options, std::move(on_accept)));
  ASSIGN_OR_RETURN(listener->token_, loop.add_fd(listener->fd_.get(), EPOLLIN, listener.get()));
  return listener;
}

PosixListener::PosixListener(EventLoop& loop, UniqueFd fd, const ListenOptions& options,
                             Network::AcceptFn on_accept)
    : loop_(loop), fd_(std::move(fd)), options_(options), on_accept_(std::move(on_accept)) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  ::getsockname(fd_.get(), reinterpret_cast<sockaddr*>(&ss), &len);
  port_ = port_of(ss);
  address_ = format_address(ss);
}

PosixListener::~PosixListener() {
  if (resume_timer_ != 0) loop_.cancel_timer(resume_timer_);
  if (token_ != 0) loop_.remove_fd(fd_.get(), token_);
}

void PosixListener::pause_accepting() {
  // Level-triggered epoll would report the pending connection again at once;
  // stop watching until descriptors may have been freed.
  if (!loop_.modify_fd(fd_.get(), token_, 0).ok()) return;
  resume_timer_ = loop_.add_timer(kAcceptPauseMs, [this] {
    resume_timer_ = 0;
    (void)loop_.modify_fd(fd_.get(), token_, EPOLLIN);
  });
}

void PosixListener::on_io(uint32_t /*events*/) {
  // Accept everything pending: one wake-up can carry a burst of connections.
  for (;;) {
    int fd = ::accept4(fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      accepted(UniqueFd(fd));
      continue;
    }
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
}

void PosixListener::accepted(UniqueFd socket) {
  set_nodelay(socket.get());
  if (options_.send_buffer_bytes > 0) {
    ::setsockopt(socket.get(), SOL_SOCKET, SO_SNDBUF, &options_.send_buffer_bytes, sizeof(int));
  }
  if (options_.receive_buffer_bytes > 0) {
    ::setsockopt(socket.get(), SOL_SOCKET, SO_RCVBUF, &options_.receive_buffer_bytes, sizeof(int));
  }
  auto stream = PosixStream::adopt(loop_, std::move(socket));
  if (!stream.ok()) {
    LOG_WARN("listener", "cannot register a connection accepted on {}: {}", address_, stream.error().to_string());
    return;
  }
  on_accept_(std::move(stream).value());
}

// ---- PosixNetwork::connect -------------------------------------------------

// One dial in progress: the socket is watched for EPOLLOUT (connect(2)
// finished, either way), and a timer bounds the wait.
class PosixNetwork::PendingConnect final : public IoHandler {
 public:
  PendingConnect(PosixNetwork& network, ConnectId id, std::string target, ConnectFn done)
      : network_(network), id_(id), target_(std::move(target)), done_(std::move(done)) {}
  ~PendingConnect() override { unwatch(); }

  void start(UniqueFd fd, int64_t timeout_ms) {
    fd_ = std::move(fd);
    auto token = network_.loop_.add_fd(fd_.get(), EPOLLOUT, this);
    if (!token.ok()) {
      network_.fail_soon(id_, token.error());
      return;
    }
    token_ = *token;
    ConnectId id = id_;
    PosixNetwork* network = &network_;
    timer_ = network_.loop_.add_timer(timeout_ms, [network, id, target = target_, timeout_ms] {
      network->finish(id, Error(ErrorKind::kTimedOut, "connect to " + target + " timed out after " +
                                                         std::to_string(timeout_ms) + " ms"));
    });
  }

  void on_io(uint32_t /*events*/) override {
    int err = 0;
    socklen_t len = sizeof err;
    if (::getsockopt(fd_.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err == 0) {
      // EPOLLOUT with no error: connected (or a spurious wake before the
      // handshake finished: getpeername tells).
      sockaddr_storage ss{};
      socklen_t slen = sizeof ss;
      if (::getpeername(fd_.get(), reinterpret_cast<sockaddr*>(&ss), &slen) != 0) {
        if (errno == ENOTCONN) return;
        err = errno;
      }
    }
    if (err != 0) {
      network_.finish(id_, errno_error("connect to " + target_, err));
      return;
    }
    unwatch();
    auto stream = PosixStream::adopt(network_.loop_, std::move(fd_));
    if (!stream.ok()) {
      network_.finish(id_, stream.error());
      return;
    }
    network_.finish(id_, StreamPtr(std::move(stream).value()));
  }

  ConnectFn take_done() { return std::move(done_); }

 private:
  void unwatch() {
    if (timer_ != 0) network_.loop_.cancel_timer(timer_);
    timer_ = 0;
    if (token_ != 0) network_.loop_.remove_fd(fd_.get(), token_);
    token_ = 0;
  }

  PosixNetwork& network_;
  ConnectId id_;
  std::string target_;
  ConnectFn done_;
  UniqueFd fd_;
  IoToken token_ = 0;
  TimerId timer_ = 0;
};

PosixNetwork::PosixNetwork(EventLoop& loop) : loop_(loop) {}
PosixNetwork::~PosixNetwork() { pending_.clear(); }

Result<std::unique_ptr<Listener>> PosixNetwork::listen(const ListenOptions& options, AcceptFn on_accept) {
  ASSIGN_OR_RETURN(auto listener, PosixListener::listen(loop_, options, std::move(on_accept)));
  return std::unique_ptr<Listener>(std::move(listener));
}

ConnectId PosixNetwork::connect(const std::string& host, uint16_t port, int64_t timeout_ms, ConnectFn done) {
  ConnectId id = next_id_++;
  std::string target = host + ":" + std::to_string(port);
  auto* pending = new PendingConnect(*this, id, target, std::move(done));
  pending_.emplace(id, std::unique_ptr<PendingConnect>(pending));
  auto addresses = resolve(host, port, 0);
  if (!addresses.ok()) {
    fail_soon(id, addresses.error());
    return id;
  }
  const addrinfo* ai = addresses->get();
  UniqueFd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol));
  if (!fd.valid()) {
    fail_soon(id, errno_error("socket for connect to " + target, errno));
    return id;
  }
  set_nodelay(fd.get());
  int rc;
  do {
    rc = ::connect(fd.get(), ai->ai_addr, ai->ai_addrlen);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0 && errno != EINPROGRESS) {
    fail_soon(id, errno_error("connect to " + target, errno));
    return id;
  }
  // Connected at once or in progress: EPOLLOUT tells either way.
  pending->start(std::move(fd), timeout_ms);
  return id;
}

void PosixNetwork::fail_soon(ConnectId id, Error error) {
  std::weak_ptr<bool> alive = alive_;
  loop_.post([this, alive, id, error = std::move(error)]() mutable {
    if (alive.lock()) finish(id, std::move(error));
  });
}

void PosixNetwork::finish(ConnectId id, Result<StreamPtr> outcome) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return;  // cancelled meanwhile (a stream in `outcome` closes here)
  ConnectFn done = it->second->take_done();
  pending_.erase(it);
  done(std::move(outcome));
}

void PosixNetwork::cancel_connect(ConnectId id) { pending_.erase(id); }

}  // namespace samsa

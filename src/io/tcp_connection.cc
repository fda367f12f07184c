#include "io/tcp_connection.h"

#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>

namespace samsa {
namespace {
constexpr int kMaxIov = 128;
// sendfile moves at most ~2 GiB per call; regions are int32-sized anyway.
constexpr int64_t kMaxSendfileChunk = int64_t(1) << 30;
}  // namespace

Result<std::unique_ptr<TcpConnection>> TcpConnection::open(EventLoop& loop, UniqueFd socket, std::string peer,
                                                           Observer* observer) {
  std::unique_ptr<TcpConnection> conn(new TcpConnection(loop, std::move(socket), std::move(peer), observer));
  conn->interest_ = EPOLLIN;
  ASSIGN_OR_RETURN(conn->token_, loop.add_fd(conn->fd_.get(), conn->interest_, conn.get()));
  return conn;
}

TcpConnection::TcpConnection(EventLoop& loop, UniqueFd socket, std::string peer, Observer* observer)
    : loop_(loop), fd_(std::move(socket)), peer_(std::move(peer)), observer_(observer) {}

TcpConnection::~TcpConnection() { close(); }

void TcpConnection::close() {
  if (!fd_.valid()) return;
  loop_.remove_fd(fd_.get(), token_);
  fd_.reset();
  queue_.clear();
  queued_bytes_ = 0;
  if (memory_budget_) memory_budget_->release(queued_memory_bytes_);
  queued_memory_bytes_ = 0;
}

// The head buffer is fully written: free it, and its bytes leave the budget.
void TcpConnection::pop_sent() {
  size_t memory = queue_.front().buffer.bytes().size();
  queue_.pop_front();
  queued_memory_bytes_ -= memory;
  if (memory_budget_) memory_budget_->release(memory);
}

TcpConnection::ReadResult TcpConnection::read(uint8_t* dst, size_t capacity) {
  if (!fd_.valid()) return {ReadStatus::kError, 0, EBADF};
  for (;;) {
    ssize_t n = ::recv(fd_.get(), dst, capacity, MSG_DONTWAIT);
    if (n > 0) return {ReadStatus::kData, size_t(n), 0};
    if (n == 0) return {ReadStatus::kEof, 0, 0};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return {ReadStatus::kWouldBlock, 0, 0};
    return {ReadStatus::kError, 0, errno};
  }
}

void TcpConnection::set_reading(bool enabled) {
  if (reading_ == enabled) return;
  reading_ = enabled;
  update_interest();
}

void TcpConnection::update_interest() {
  if (!fd_.valid()) return;
  uint32_t want = (reading_ ? uint32_t(EPOLLIN) : 0u) | (queue_.empty() ? 0u : uint32_t(EPOLLOUT));
  if (want == interest_) return;
  interest_ = want;
  // MOD can only fail if the fd is gone, which close() rules out.
  (void)loop_.modify_fd(fd_.get(), token_, want);
}

Status TcpConnection::send(OutBuffer buffer) {
  if (write_failed_) return write_error_;
  if (!fd_.valid()) return Error(ErrorKind::kClosed, "connection to " + peer_ + " is closed");
  for (const auto& s : buffer.splices()) ASSERT(s.at <= buffer.bytes().size());
  size_t size = buffer.total_size();
  if (size == 0) return ok_status();
  size_t memory = buffer.bytes().size();
  queued_bytes_ += size;
  queued_memory_bytes_ += memory;
  if (memory_budget_) memory_budget_->acquire_anyway(memory);
  queue_.push_back(Pending{std::move(buffer)});
  if (corked_) return ok_status();
  // Only try at once if nothing was waiting: otherwise EPOLLOUT is armed and
  // the socket is known to be full.
  if (queue_.size() == 1 || !(interest_ & EPOLLOUT)) {
    if (flush() == Flush::kError) return write_error_;
  }
  update_interest();
  return ok_status();
}

Status TcpConnection::uncork() {
  corked_ = false;
  if (write_failed_) return write_error_;
  if (!fd_.valid() || queue_.empty()) return ok_status();
  if (!(interest_ & EPOLLOUT)) {
    if (flush() == Flush::kError) return write_error_;
  }
  update_interest();
  return ok_status();
}

void TcpConnection::on_io(uint32_t events) {
  if ((events & EPOLLOUT) && !queue_.empty()) {
    Flush r = flush();
    if (r == Flush::kError) {
      observer_->on_error(write_error_);
      return;
    }
    update_interest();
    if (r == Flush::kDone) {
      observer_->on_drained();
      if (closed()) return;
    }
  }
  if (events & (EPOLLIN | EPOLLRDHUP)) {
    if (reading_) observer_->on_readable();
    return;
  }
  if (events & (EPOLLERR | EPOLLHUP)) {
    // Reported even when not asked for; with reading paused nobody would
    // notice, and level-triggered epoll would report it forever.
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(fd_.get(), SOL_SOCKET, SO_ERROR, &err, &len);
    observer_->on_error(err != 0 ? errno_error("connection to " + peer_, err)
                                 : Error(ErrorKind::kClosed, "connection to " + peer_ + " hung up"));
  }
}

bool TcpConnection::at_region(const Pending& p) {
  const auto& splices = p.buffer.splices();
  return p.next_splice < splices.size() && splices[p.next_splice].at == p.byte_pos;
}

bool TcpConnection::finished(const Pending& p) {
  return p.byte_pos == p.buffer.bytes().size() && p.next_splice == p.buffer.splices().size();
}

void TcpConnection::skip_empty(Pending& p) {
  const auto& splices = p.buffer.splices();
  while (at_region(p) && splices[p.next_splice].region.size == 0) ++p.next_splice;
}

TcpConnection::Flush TcpConnection::flush() {
  while (!queue_.empty()) {
    Pending& p = queue_.front();
    skip_empty(p);
    if (finished(p)) {
      pop_sent();
      continue;
    }
    Flush r = at_region(p) ? send_region(p) : send_bytes();
    if (r != Flush::kDone) return r;
  }
  return Flush::kDone;
}

// Sends the file region at the head of `p`. kDone means "progress made, go on".
TcpConnection::Flush TcpConnection::send_region(Pending& p) {
  const FileRegion& region = p.buffer.splices()[p.next_splice].region;
  int64_t remaining = int64_t(region.size) - p.region_sent;
  off_t offset = off_t(region.position + p.region_sent);
  ssize_t n = ::sendfile(fd_.get(), region.file->native_handle(), &offset, size_t(std::min(remaining, kMaxSendfileChunk)));
  if (n < 0) {
    if (errno == EINTR) return Flush::kDone;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Flush::kWouldBlock;
    write_error_ = errno_error("sendfile to " + peer_, errno);
    write_failed_ = true;
    return Flush::kError;
  }
  if (n == 0) {
    // The file is shorter than the region (truncated underneath us). The
    // response framing is already promised to the peer, so the stream is
    // beyond repair.
    write_error_ = Error(ErrorKind::kCorrupt, "file region ends early while sending to " + peer_);
    write_failed_ = true;
    return Flush::kError;
  }
  p.region_sent += n;
  queued_bytes_ -= size_t(n);
  if (p.region_sent == region.size) {
    ++p.next_splice;
    p.region_sent = 0;
  }
  return Flush::kDone;
}

// Gathers consecutive byte ranges across queued buffers up to the next file
// region, and writes them with one sendmsg.
TcpConnection::Flush TcpConnection::send_bytes() {
  iovec iov[kMaxIov];
  int count = 0;
  size_t total = 0;
  for (auto it = queue_.begin(); it != queue_.end() && count < kMaxIov; ++it) {
    Pending& p = *it;
    skip_empty(p);
    if (at_region(p)) break;
    const auto& splices = p.buffer.splices();
    size_t end = p.next_splice < splices.size() ? splices[p.next_splice].at : p.buffer.bytes().size();
    if (end > p.byte_pos) {
      iov[count].iov_base = p.buffer.bytes().data() + p.byte_pos;
      iov[count].iov_len = end - p.byte_pos;
      total += end - p.byte_pos;
      ++count;
    }
    if (p.next_splice < splices.size()) break;  // a region follows these bytes
  }
  ASSERT(count > 0);
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = size_t(count);
  ssize_t n = ::sendmsg(fd_.get(), &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n < 0) {
    if (errno == EINTR) return Flush::kDone;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Flush::kWouldBlock;
    write_error_ = errno_error("send to " + peer_, errno);
    write_failed_ = true;
    return Flush::kError;
  }
  advance_bytes(size_t(n));
  // A short write on a stream socket means its buffer is full: wait for
  // EPOLLOUT instead of paying for a syscall that returns EAGAIN.
  return size_t(n) < total ? Flush::kWouldBlock : Flush::kDone;
}

void TcpConnection::advance_bytes(size_t n) {
  queued_bytes_ -= n;
  while (n > 0) {
    Pending& p = queue_.front();
    skip_empty(p);
    const auto& splices = p.buffer.splices();
    size_t end = p.next_splice < splices.size() ? splices[p.next_splice].at : p.buffer.bytes().size();
    size_t k = std::min(n, end - p.byte_pos);
    ASSERT(k > 0);  // send_bytes never gathers past a region
    p.byte_pos += k;
    n -= k;
    skip_empty(p);
    if (finished(p)) pop_sent();
  }
}

}  // namespace samsa

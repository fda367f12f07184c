#include "io/kafka_connection.h"

#include <atomic>
#include <bit>
#include <cstring>

#include "base/log.h"

namespace samsa {
namespace {
constexpr size_t kReadChunk = 64 * 1024;
// A frame larger than this is read straight into its own buffer rather than
// through the chunk buffer (saves a copy, keeps the chunk buffer small).
constexpr size_t kBigFrame = kReadChunk / 2;
// Reads per readiness event, so one busy client cannot starve the others.
constexpr int kMaxReadsPerEvent = 16;
// A large frame's buffer is kept for the next large frame when it is at
// most this big (a producer's requests are ~1 MB by default).
constexpr size_t kMaxSpareFrame = 2 * 1024 * 1024;
std::atomic<uint64_t> g_next_connection_id{1};
}  // namespace

uint64_t next_connection_id() { return g_next_connection_id.fetch_add(1, std::memory_order_relaxed); }

Result<std::shared_ptr<KafkaConnection>> KafkaConnection::open(EventLoop& loop, UniqueFd socket, std::string peer,
                                                               uint64_t id, FrameSink& sink,
                                                               const KafkaConnectionLimits& limits,
                                                               ClosedFn on_closed) {
  std::shared_ptr<KafkaConnection> conn(new KafkaConnection(loop, peer, id, sink, limits, std::move(on_closed)));
  ASSIGN_OR_RETURN(conn->tcp_, TcpConnection::open(loop, std::move(socket), std::move(peer), conn.get()));
  return conn;
}

KafkaConnection::KafkaConnection(EventLoop& loop, std::string peer, uint64_t id, FrameSink& sink,
                                 const KafkaConnectionLimits& limits, ClosedFn on_closed)
    : loop_(loop),
      peer_(std::move(peer)),
      id_(id),
      sink_(sink),
      limits_(limits),
      on_closed_(std::move(on_closed)),
      rbuf_(kReadChunk),
      last_activity_ms_(loop.now_ms()) {
  ASSERT(limits_.max_in_flight > 0);
}

KafkaConnection::~KafkaConnection() {
  if (tcp_) tcp_->close();
}

void KafkaConnection::close() {
  if (closed_) return;
  closed_ = true;
  tcp_->close();
  slots_.clear();
  big_.reset();
  spare_.reset();
  // Outlive the callers on this stack even if the owner drops us below.
  loop_.post([self = shared_from_this()] {});
  sink_.on_close(id_);
  if (on_closed_) on_closed_(id_);
}

void KafkaConnection::on_error(const Error& error) {
  LOG_DEBUG("connection", "closing connection {} from {}: {}", id_, peer_, error.to_string());
  close();
}

void KafkaConnection::on_readable() {
  // Replies given while we dispatch this burst are written together after it.
  tcp_->cork();
  for (int i = 0; i < kMaxReadsPerEvent && !closed_ && !paused_ && !closing_; ++i) {
    if (!read_once()) break;
    dispatch_buffered();
  }
  if (closed_) return;
  Status st = tcp_->uncork();
  if (!st.ok()) {
    on_error(st.error());
    return;
  }
  if (closing_) {
    if (!tcp_->has_queued()) close();
    return;
  }
  update_pause();
}

// One recv(); false when there is nothing more to read now (or we closed).
bool KafkaConnection::read_once() {
  uint8_t* dst;
  size_t cap;
  if (big_) {
    dst = big_->data() + big_filled_;
    cap = big_->size() - big_filled_;
  } else {
    make_room();
    dst = rbuf_.data() + rend_;
    cap = rbuf_.size() - rend_;
  }
  auto r = tcp_->read(dst, cap);
  switch (r.status) {
    case TcpConnection::ReadStatus::kWouldBlock:
      return false;
    case TcpConnection::ReadStatus::kEof:
      if (big_ || rend_ > rstart_) {
        LOG_DEBUG("connection", "connection {} from {} ended in the middle of a frame", id_, peer_);
      }
      close();
      return false;
    case TcpConnection::ReadStatus::kError:
      LOG_DEBUG("connection", "read from {} failed: {}", peer_, std::strerror(r.err));
      close();
      return false;
    case TcpConnection::ReadStatus::kData:
      last_activity_ms_ = loop_.now_ms();
      break;
  }
  if (big_) {
    big_filled_ += r.bytes;
    if (big_filled_ == big_->size()) {
      big_filled_ = 0;
      if (big_->size() <= kMaxSpareFrame) spare_ = big_;
      emit(std::move(big_));
    }
  } else {
    rend_ += r.bytes;
  }
  return true;
}

void KafkaConnection::make_room() {
  if (rstart_ == rend_) {
    rstart_ = rend_ = 0;
    return;
  }
  // Keep at least a quarter of the buffer free for the next read.
  if (rstart_ > 0 && rbuf_.size() - rend_ < kReadChunk / 4) {
    std::memmove(rbuf_.data(), rbuf_.data() + rstart_, rend_ - rstart_);
    rend_ -= rstart_;
    rstart_ = 0;
  }
}

// Splits buffered bytes into frames and hands them out, as far as the
// in-flight limit allows.
void KafkaConnection::dispatch_buffered() {
  if (dispatching_) return;  // a reply given inside on_frame() re-entered us
  dispatching_ = true;
  while (!closed_ && !closing_ && !big_ && slots_.size() < limits_.max_in_flight &&
         tcp_->queued_bytes() <= limits_.max_queued_write_bytes) {
    size_t avail = rend_ - rstart_;
    if (avail < 4) break;
    int32_t size = int32_t(load_be32(rbuf_.data() + rstart_));
    if (size < 0 || size > limits_.max_request_bytes) {
      LOG_WARN("connection", "closing connection from {}: request size {} is outside 0..{} (socket.request.max.bytes)",
               peer_, size, limits_.max_request_bytes);
      close();
      break;
    }
    const uint8_t* body = rbuf_.data() + rstart_ + 4;
    if (avail - 4 >= size_t(size)) {
      rstart_ += 4 + size_t(size);
      emit(std::make_shared<Bytes>(body, body + size));
      continue;
    }
    if (size_t(size) > kBigFrame) {
      big_ = take_big_buffer(size_t(size));
      big_filled_ = avail - 4;
      std::memcpy(big_->data(), body, big_filled_);
      rstart_ = rend_ = 0;
    }
    break;
  }
  dispatching_ = false;
  update_pause();
}

// The previous large frame's buffer once its request has let go of it (the
// sink holds no other reference): no allocation, and no zeroing of ~1 MB
// that recv() overwrites at once, on every produce request. resize() zero-
// fills only growth beyond the previous frame's size.
std::shared_ptr<Bytes> KafkaConnection::take_big_buffer(size_t size) {
  if (spare_ && spare_.use_count() == 1 && size <= kMaxSpareFrame) {
    std::shared_ptr<Bytes> buffer = std::move(spare_);
    buffer->resize(size);
    return buffer;
  }
  spare_.reset();
  auto buffer = std::make_shared<Bytes>();
  // Capacity rounded up to a power of two, so a next frame of similar size
  // fits without reallocating.
  if (size <= kMaxSpareFrame) buffer->reserve(std::bit_ceil(size));
  buffer->resize(size);
  return buffer;
}

void KafkaConnection::emit(std::shared_ptr<Bytes> frame) {
  uint64_t seq = next_seq_++;
  slots_.emplace_back();
  std::weak_ptr<KafkaConnection> weak = weak_from_this();
  InboundFrame in{id_, seq, std::move(frame), peer_};
  sink_.on_frame(std::move(in), [weak, seq](Reply reply) {
    if (auto self = weak.lock()) self->complete(seq, std::move(reply));
  });
}

void KafkaConnection::complete(uint64_t sequence, Reply reply) {
  ASSERT(loop_.in_loop_thread());
  if (closed_ || closing_) return;
  ASSERT_MSG(sequence >= first_seq_ && sequence < next_seq_, "reply called twice for one request");
  auto& slot = slots_[sequence - first_seq_];
  ASSERT_MSG(!slot.has_value(), "reply called twice for one request");
  slot = std::move(reply);
  pump_replies();
}

void KafkaConnection::pump_replies() {
  while (!slots_.empty() && slots_.front().has_value() && !closed_) {
    Reply reply = std::move(*slots_.front());
    slots_.pop_front();
    ++first_seq_;
    if (reply.kind == ReplyKind::kNoReply) continue;
    if (reply.kind == ReplyKind::kClose) {
      closing_ = true;
      slots_.clear();  // later replies will be ignored
      tcp_->set_reading(false);
      break;
    }
    Status st = tcp_->send(std::move(reply.payload));
    if (!st.ok()) {
      on_error(st.error());
      return;
    }
    last_activity_ms_ = loop_.now_ms();
  }
  if (closed_) return;
  if (closing_) {
    if (!tcp_->has_queued()) close();
    return;
  }
  update_pause();
}

void KafkaConnection::on_drained() {
  last_activity_ms_ = loop_.now_ms();
  if (closing_) {
    close();
    return;
  }
  update_pause();
}

void KafkaConnection::update_pause() {
  if (closed_ || closing_) return;
  bool full = slots_.size() >= limits_.max_in_flight || tcp_->queued_bytes() > limits_.max_queued_write_bytes;
  if (full == paused_) return;
  paused_ = full;
  tcp_->set_reading(!full);
  if (!full) {
    // Frames already buffered while paused go out before we read more; the
    // socket may have nothing new to say.
    dispatch_buffered();
  }
}

}  // namespace samsa

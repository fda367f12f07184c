#include "io/kafka_connection.h"

#include <algorithm>
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
// A large frame's buffer is kept for the next large frame when its capacity
// is at most this big (a producer's requests are ~1 MB by default).
constexpr size_t kMaxSpareFrame = 2 * 1024 * 1024;
// A large frame's buffer grows by its own size (doubling) within these
// bounds: few reallocations for a big frame, at most 1 MiB committed ahead
// of the bytes received.
constexpr size_t kMinGrowStep = 64 * 1024;
constexpr size_t kMaxGrowStep = 1024 * 1024;
}  // namespace

std::shared_ptr<KafkaConnection> KafkaConnection::open(Runtime& runtime, StreamPtr stream, uint64_t id,
                                                       FrameSink& sink, const KafkaConnectionLimits& limits,
                                                       ClosedFn on_closed) {
  std::string peer = stream->peer_address();
  std::shared_ptr<KafkaConnection> conn(
      new KafkaConnection(runtime, std::move(peer), id, sink, limits, std::move(on_closed)));
  conn->tcp_ = std::make_unique<Connection>(std::move(stream), conn.get());
  conn->tcp_->set_memory_budget(conn->responses_);
  return conn;
}

KafkaConnection::KafkaConnection(Runtime& runtime, std::string peer, uint64_t id, FrameSink& sink,
                                 const KafkaConnectionLimits& limits, ClosedFn on_closed)
    : runtime_(runtime),
      peer_(std::move(peer)),
      id_(id),
      sink_(sink),
      limits_(limits),
      on_closed_(std::move(on_closed)),
      requests_(limits_.request_bytes ? limits_.request_bytes : ByteBudget::create(runtime)),
      responses_(limits_.response_bytes ? limits_.response_bytes : ByteBudget::create(runtime)),
      rbuf_(kReadChunk),
      last_activity_ms_(runtime.now_ms()) {
  ASSERT(limits_.max_in_flight > 0);
}

KafkaConnection::~KafkaConnection() {
  if (tcp_) tcp_->close();
  release_held();
}

// Gives back everything this connection holds in the shared budgets (the
// socket's queue gives back its own on close). Frames already handed to the
// sink keep their charge until the sink drops them.
void KafkaConnection::release_held() {
  if (budget_waiter_ != 0) requests_->cancel(budget_waiter_);
  budget_waiter_ = 0;
  if (big_) requests_->release(big_->size());
  big_.reset();
  big_filled_ = big_declared_ = 0;
  requests_->end_overdraft(id_);
  spare_.reset();
  slots_.clear();
  responses_->release(held_memory_bytes_);
  held_memory_bytes_ = held_bytes_ = 0;
}

void KafkaConnection::close() {
  if (closed_) return;
  closed_ = true;
  tcp_->close();
  release_held();
  // Outlive the callers on this stack even if the owner drops us below.
  runtime_.post([self = shared_from_this()] {});
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
    if (big_filled_ == big_->size() && !grow_big()) return false;
    dst = big_->data() + big_filled_;
    cap = big_->size() - big_filled_;
  } else {
    make_room();
    dst = rbuf_.data() + rend_;
    cap = rbuf_.size() - rend_;
  }
  auto r = tcp_->read(dst, cap);
  switch (r.status) {
    case IoResult::Status::kWouldBlock:
      return false;
    case IoResult::Status::kEof:
      if (big_ || rend_ > rstart_) {
        LOG_DEBUG("connection", "connection {} from {} ended in the middle of a frame", id_, peer_);
      }
      close();
      return false;
    case IoResult::Status::kError:
      LOG_DEBUG("connection", "read from {} failed: {}", peer_, std::strerror(r.err));
      close();
      return false;
    case IoResult::Status::kDone:
      last_activity_ms_ = runtime_.now_ms();
      break;
  }
  if (big_) {
    big_filled_ += r.bytes;
    if (big_filled_ == big_declared_) finish_big();
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

bool KafkaConnection::can_dispatch() const {
  return !closed_ && !closing_ && !big_ && budget_waiter_ == 0 && slots_.size() < limits_.max_in_flight &&
         !responses_backlogged();
}

// Splits buffered bytes into frames and hands them out, as far as the limits
// allow.
void KafkaConnection::dispatch_buffered() {
  if (dispatching_) return;  // a reply given inside on_frame() re-entered us
  dispatching_ = true;
  while (can_dispatch()) {
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
      // Complete: the bytes wait in the chunk buffer if the budget says no.
      if (!charge_request_bytes(size_t(size), /*mid_frame=*/false)) break;
      rstart_ += 4 + size_t(size);
      emit(std::make_shared<Bytes>(body, body + size), size_t(size));
      continue;
    }
    if (size_t(size) > kBigFrame && start_big(size_t(size), body, avail - 4)) rstart_ = rend_ = 0;
    break;
  }
  dispatching_ = false;
  update_pause();
}

// Moves the start of a large frame (its first `have_size` bytes) into a
// buffer of its own, committing only what has arrived (at least 64 KiB),
// or reusing the previous large frame's buffer (committed already) when the
// sink has let go of it: no allocation, and no zeroing of ~1 MB that recv()
// overwrites at once, on every produce request.
bool KafkaConnection::start_big(size_t declared, const uint8_t* have, size_t have_size) {
  bool reuse = spare_ && spare_.use_count() == 1;
  size_t committed = reuse ? spare_->size() : kMinGrowStep;
  size_t initial = std::min(declared, std::max(have_size, committed));
  if (!charge_request_bytes(initial, /*mid_frame=*/false)) return false;
  std::shared_ptr<Bytes> buffer;
  if (reuse) {
    buffer = std::move(spare_);
  } else {
    spare_.reset();
    buffer = std::make_shared<Bytes>();
    // Room for the whole frame when it is of a producer's usual size (address
    // space only: pages are committed as they are written), else for the
    // first step; grow_big() doubles it.
    buffer->reserve(std::bit_ceil(declared <= kMaxSpareFrame ? declared : initial));
  }
  buffer->resize(initial);  // zeroes only growth beyond what was committed
  std::memcpy(buffer->data(), have, have_size);
  big_ = std::move(buffer);
  big_filled_ = have_size;
  big_declared_ = declared;
  return true;
}

// Commits the next stretch of a large frame before reading into it: the
// buffer's own size (doubling) between 64 KiB and 1 MiB, never beyond the
// declared size. False (and paused) when the budget refuses.
bool KafkaConnection::grow_big() {
  size_t size = big_->size();
  size_t target = std::min(big_declared_, size + std::clamp(size, kMinGrowStep, kMaxGrowStep));
  if (!charge_request_bytes(target - size, /*mid_frame=*/true)) return false;
  if (big_->capacity() < target) {
    big_->reserve(std::min(big_declared_, std::max(target, 2 * big_->capacity())));
  }
  big_->resize(target);
  return true;
}

void KafkaConnection::finish_big() {
  ASSERT(big_->size() == big_declared_);
  size_t charged = big_declared_;
  big_filled_ = big_declared_ = 0;
  if (big_->capacity() <= kMaxSpareFrame) spare_ = big_;
  requests_->end_overdraft(id_);
  emit(std::move(big_), charged);
}

bool KafkaConnection::charge_request_bytes(size_t n, bool mid_frame) {
  if (requests_->try_acquire(n)) return true;
  if (mid_frame && requests_->take_overdraft(id_)) {
    requests_->acquire_anyway(n);
    return true;
  }
  wait_for_request_budget();
  return false;
}

void KafkaConnection::wait_for_request_budget() {
  if (budget_waiter_ != 0) return;
  // Memory is short: the idle reuse buffer goes first.
  if (spare_ && spare_.use_count() == 1) spare_.reset();
  std::weak_ptr<KafkaConnection> weak = weak_from_this();
  budget_waiter_ = requests_->wait([weak] {
    if (auto self = weak.lock()) self->on_request_budget();
  });
  update_pause();
}

void KafkaConnection::on_request_budget() {
  budget_waiter_ = 0;
  if (closed_ || closing_) return;
  // Unpausing dispatches what waits in the chunk buffer; a frame in the
  // middle is resumed by the socket's next readiness event.
  update_pause();
}

void KafkaConnection::emit(std::shared_ptr<Bytes> frame, size_t charged) {
  uint64_t seq = next_seq_++;
  slots_.emplace_back();
  std::weak_ptr<KafkaConnection> weak = weak_from_this();
  InboundFrame in{id_, seq, requests_->lease(std::move(frame), charged), peer_};
  sink_.on_frame(std::move(in), [weak, seq](Reply reply) {
    if (auto self = weak.lock()) self->complete(seq, std::move(reply));
  });
}

bool KafkaConnection::responses_backlogged() const {
  if (tcp_->queued_bytes() + held_bytes_ > limits_.max_queued_write_bytes) return true;
  return responses_->exhausted() && tcp_->queued_memory_bytes() + held_memory_bytes_ > 0;
}

void KafkaConnection::hold_reply(const Reply& reply) {
  size_t memory = reply.payload.bytes().size();
  held_bytes_ += reply.payload.total_size();
  held_memory_bytes_ += memory;
  responses_->acquire_anyway(memory);
}

void KafkaConnection::unhold_reply(const Reply& reply) {
  size_t memory = reply.payload.bytes().size();
  held_bytes_ -= reply.payload.total_size();
  held_memory_bytes_ -= memory;
  responses_->release(memory);
}

void KafkaConnection::complete(uint64_t sequence, Reply reply) {
  ASSERT(runtime_.in_loop_thread());
  if (closed_ || closing_) return;
  ASSERT_MSG(sequence >= first_seq_ && sequence < next_seq_, "reply called twice for one request");
  auto& slot = slots_[sequence - first_seq_];
  ASSERT_MSG(!slot.has_value(), "reply called twice for one request");
  hold_reply(reply);
  slot = std::move(reply);
  pump_replies();
}

void KafkaConnection::pump_replies() {
  while (!slots_.empty() && slots_.front().has_value() && !closed_) {
    Reply reply = std::move(*slots_.front());
    slots_.pop_front();
    ++first_seq_;
    unhold_reply(reply);
    if (reply.kind == ReplyKind::kNoReply) continue;
    if (reply.kind == ReplyKind::kClose) {
      closing_ = true;
      slots_.clear();  // later replies will be ignored
      responses_->release(held_memory_bytes_);
      held_memory_bytes_ = held_bytes_ = 0;
      tcp_->set_reading(false);
      break;
    }
    Status st = tcp_->send(std::move(reply.payload));
    if (!st.ok()) {
      on_error(st.error());
      return;
    }
    last_activity_ms_ = runtime_.now_ms();
  }
  if (closed_) return;
  if (closing_) {
    if (!tcp_->has_queued()) close();
    return;
  }
  update_pause();
}

void KafkaConnection::on_drained() {
  last_activity_ms_ = runtime_.now_ms();
  if (closing_) {
    close();
    return;
  }
  update_pause();
}

bool KafkaConnection::should_pause() const {
  return slots_.size() >= limits_.max_in_flight || budget_waiter_ != 0 || responses_backlogged();
}

void KafkaConnection::update_pause() {
  if (closed_ || closing_) return;
  bool full = should_pause();
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

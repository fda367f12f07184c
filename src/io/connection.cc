#include "io/connection.h"

#include <algorithm>
#include <cstring>

namespace samsa {
namespace {
// Pieces gathered into one Stream::write (one sendmsg).
constexpr size_t kMaxPieces = 128;
}  // namespace

Connection::Connection(StreamPtr stream, Observer* observer) : stream_(std::move(stream)), observer_(observer) {
  stream_->set_handler(this);
  stream_->set_interest(true, false);
}

Connection::~Connection() {
  close();
  stream_->set_handler(nullptr);
}

void Connection::close() {
  if (stream_->closed()) return;
  stream_->close();
  queue_.clear();
  queued_bytes_ = 0;
  if (memory_budget_) memory_budget_->release(queued_memory_bytes_);
  queued_memory_bytes_ = 0;
}

// The head buffer is fully written: free it, and its bytes leave the budget.
void Connection::pop_sent() {
  size_t memory = queue_.front().buffer.bytes().size();
  queue_.pop_front();
  queued_memory_bytes_ -= memory;
  if (memory_budget_) memory_budget_->release(memory);
}

void Connection::set_reading(bool enabled) {
  if (reading_ == enabled) return;
  reading_ = enabled;
  update_interest();
}

void Connection::update_interest() {
  if (stream_->closed()) return;
  bool want_write = !queue_.empty();
  if (want_write == writing_ && reading_ == read_interest_) return;
  writing_ = want_write;
  read_interest_ = reading_;
  stream_->set_interest(read_interest_, writing_);
}

Status Connection::send(OutBuffer buffer) {
  if (write_failed_) return write_error_;
  if (stream_->closed()) return Error(ErrorKind::kClosed, "connection to " + peer() + " is closed");
  for (const auto& s : buffer.splices()) ASSERT(s.at <= buffer.bytes().size());
  size_t size = buffer.total_size();
  if (size == 0) return ok_status();
  size_t memory = buffer.bytes().size();
  queued_bytes_ += size;
  queued_memory_bytes_ += memory;
  if (memory_budget_) memory_budget_->acquire_anyway(memory);
  queue_.push_back(Pending{std::move(buffer)});
  if (corked_) return ok_status();
  // Only try at once if nothing was waiting: otherwise write interest is set
  // and the stream is known to be full.
  if (queue_.size() == 1 || !writing_) {
    if (flush() == Flush::kError) return write_error_;
  }
  update_interest();
  return ok_status();
}

Status Connection::uncork() {
  corked_ = false;
  if (write_failed_) return write_error_;
  if (stream_->closed() || queue_.empty()) return ok_status();
  if (!writing_) {
    if (flush() == Flush::kError) return write_error_;
  }
  update_interest();
  return ok_status();
}

void Connection::on_stream_ready(bool readable, bool writable, bool hangup) {
  if (writable && !queue_.empty()) {
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
  if (readable) {
    if (reading_) observer_->on_readable();
    return;
  }
  if (hangup) {
    // Reported even when not asked for; with reading paused nobody would
    // notice, and a level-triggered stream would report it forever.
    observer_->on_error(Error(ErrorKind::kClosed, "connection to " + peer() + " hung up"));
  }
}

bool Connection::at_region(const Pending& p) {
  const auto& splices = p.buffer.splices();
  return p.next_splice < splices.size() && splices[p.next_splice].at == p.byte_pos;
}

bool Connection::finished(const Pending& p) {
  return p.byte_pos == p.buffer.bytes().size() && p.next_splice == p.buffer.splices().size();
}

void Connection::skip_empty(Pending& p) {
  const auto& splices = p.buffer.splices();
  while (at_region(p) && splices[p.next_splice].region.size == 0) ++p.next_splice;
}

Connection::Flush Connection::flush() {
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

Connection::Flush Connection::failed(Error error) {
  write_error_ = std::move(error);
  write_failed_ = true;
  return Flush::kError;
}

// Sends the file region at the head of `p`. kDone means "progress made, go on".
Connection::Flush Connection::send_region(Pending& p) {
  const FileRegion& region = p.buffer.splices()[p.next_splice].region;
  int64_t remaining = int64_t(region.size) - p.region_sent;
  IoResult r = stream_->send_file(*region.file, region.position + p.region_sent, size_t(remaining));
  switch (r.status) {
    case IoResult::Status::kWouldBlock:
      return Flush::kWouldBlock;
    case IoResult::Status::kError:
      return failed(errno_error("sending a file region to " + peer(), r.err));
    case IoResult::Status::kEof:
      // The file is shorter than the region (truncated underneath us). The
      // response framing is already promised to the peer, so the stream is
      // beyond repair.
      return failed(Error(ErrorKind::kCorrupt, "file region ends early while sending to " + peer()));
    case IoResult::Status::kDone:
      break;
  }
  p.region_sent += int64_t(r.bytes);
  queued_bytes_ -= r.bytes;
  if (p.region_sent == region.size) {
    ++p.next_splice;
    p.region_sent = 0;
  }
  return Flush::kDone;
}

// Gathers consecutive byte ranges across queued buffers up to the next file
// region, and writes them with one Stream::write.
Connection::Flush Connection::send_bytes() {
  ByteView pieces[kMaxPieces];
  size_t count = 0;
  size_t total = 0;
  for (auto it = queue_.begin(); it != queue_.end() && count < kMaxPieces; ++it) {
    Pending& p = *it;
    skip_empty(p);
    if (at_region(p)) break;
    const auto& splices = p.buffer.splices();
    size_t end = p.next_splice < splices.size() ? splices[p.next_splice].at : p.buffer.bytes().size();
    if (end > p.byte_pos) {
      pieces[count++] = ByteView(p.buffer.bytes().data() + p.byte_pos, end - p.byte_pos);
      total += end - p.byte_pos;
    }
    if (p.next_splice < splices.size()) break;  // a region follows these bytes
  }
  ASSERT(count > 0);
  IoResult r = stream_->write(pieces, count);
  switch (r.status) {
    case IoResult::Status::kWouldBlock:
      return Flush::kWouldBlock;
    case IoResult::Status::kError:
      return failed(errno_error("send to " + peer(), r.err));
    case IoResult::Status::kEof:
      return failed(Error(ErrorKind::kClosed, "connection to " + peer() + " closed while sending"));
    case IoResult::Status::kDone:
      break;
  }
  advance_bytes(r.bytes);
  // A short write on a stream means its buffer is full: wait for
  // writability instead of paying for a call that says kWouldBlock.
  return r.bytes < total ? Flush::kWouldBlock : Flush::kDone;
}

void Connection::advance_bytes(size_t n) {
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

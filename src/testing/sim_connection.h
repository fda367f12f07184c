#pragma once
// The inside of a simulated connection, shared by SimStreamNet (the wires),
// SimNodeNetwork (dialing and accepting) and the two SimStream ends: the
// byte queues of each direction, the chunks in flight, each end's state as
// its application sees it. Private to src/testing's network files.

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <memory>
#include <string>

#include "base/bytes.h"
#include "io/network.h"
#include "testing/sim_stream_net.h"

namespace samsa::sim {

inline constexpr int64_t kNsPerMs = 1'000'000;

// Bytes in order, appended at the back and consumed at the front.
class ByteQueue {
 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void append(ByteView bytes) {
    if (bytes.empty()) return;
    chunks_.emplace_back(bytes.begin(), bytes.end());
    size_ += bytes.size();
  }
  // Moves up to `n` bytes out into `dst`; returns how many.
  size_t read(uint8_t* dst, size_t n) {
    size_t done = 0;
    while (done < n && !chunks_.empty()) {
      Bytes& front = chunks_.front();
      size_t take = std::min(n - done, front.size() - head_);
      std::memcpy(dst + done, front.data() + head_, take);
      done += take;
      head_ += take;
      if (head_ == front.size()) {
        chunks_.pop_front();
        head_ = 0;
      }
    }
    size_ -= done;
    return done;
  }
  Bytes take(size_t n) {
    Bytes out(std::min(n, size_));
    read(out.data(), out.size());
    return out;
  }
  void clear() {
    chunks_.clear();
    head_ = 0;
    size_ = 0;
  }

 private:
  std::deque<Bytes> chunks_;
  size_t head_ = 0;
  size_t size_ = 0;
};

struct Chunk {
  int64_t arrival_ns = 0;
  Bytes data;
  bool fin = false;    // the sender closed after these bytes
  bool reset = false;  // lost for good (or a reset fault): the connection resets on arrival
};

struct SimListenerRecord {
  HostId host;
  uint64_t incarnation = 0;
  std::string bind_ip;  // "0.0.0.0", "127.0.0.1" or the host's address
  uint16_t port = 0;
  std::string address;
  Network::AcceptFn on_accept;
  int send_buffer_bytes = 0;
  int receive_buffer_bytes = 0;
  bool open = true;
};

struct SimConnection : std::enable_shared_from_this<SimConnection> {
  struct Side {
    HostId host;
    uint64_t incarnation = 0;
    std::string local;
    std::string peer;
    int send_buffer_bytes = 0;
    int receive_buffer_bytes = 0;
    // Receiving.
    ByteQueue incoming;
    bool eof = false;  // the peer's FIN arrived
    int error = 0;     // ECONNRESET once reset
    // The application's end.
    bool attached = false;  // a SimStream exists for it
    bool closed = false;
    Stream::Handler* handler = nullptr;
    bool want_read = false;
    bool want_write = false;
    EventId ready_event = 0;
    // Sending (this side -> the other).
    ByteQueue pending;
    std::deque<Chunk> in_flight;
    int64_t in_flight_bytes = 0;
    int64_t last_arrival_ns = 0;
    EventId delivery = 0;
    bool fin_queued = false;
    bool fin_sent = false;
    bool held = false;
    int64_t held_since_ns = 0;
  };
  uint64_t id = 0;
  Side side[2];
  bool reset = false;

  std::string name(int from) const { return side[from].local + ">" + side[from].peer; }
  int64_t send_room(int s) const {
    return int64_t(side[s].send_buffer_bytes) - int64_t(side[s].pending.size()) - side[s].in_flight_bytes;
  }
  bool readable(int s) const {
    const Side& x = side[s];
    return x.want_read && (!x.incoming.empty() || x.eof || x.error != 0);
  }
  bool writable(int s) const {
    const Side& x = side[s];
    return x.want_write && (x.error != 0 || send_room(s) > 0);
  }
  // As epoll's EPOLLHUP/EPOLLERR: the connection failed (a FIN alone is
  // end of stream, reported as readable).
  bool hangup(int s) const { return side[s].error != 0; }
};

class SimStream final : public Stream {
 public:
  SimStream(SimStreamNet& net, std::shared_ptr<SimConnection> c, int side) : net_(net), c_(std::move(c)), s_(side) {
    me().attached = true;
  }
  ~SimStream() override {
    close();
    me().attached = false;
  }

  void set_handler(Handler* handler) override {
    me().handler = handler;
    if (handler == nullptr) {
      net_.world().cancel(me().ready_event);
      me().ready_event = 0;
    } else {
      net_.notify(*c_, s_);
    }
  }
  void set_interest(bool readable, bool writable) override {
    me().want_read = readable;
    me().want_write = writable;
    net_.notify(*c_, s_);
  }

  IoResult read(uint8_t* dst, size_t capacity) override {
    SimConnection::Side& x = me();
    if (x.closed) return {IoResult::Status::kError, 0, EBADF};
    if (!x.incoming.empty()) {
      if (capacity == 0) return {IoResult::Status::kDone, 0, 0};
      size_t n = x.incoming.read(dst, capacity);
      net_.pump(*c_, 1 - s_);  // the window opened
      return {IoResult::Status::kDone, n, 0};
    }
    if (x.error != 0) return {IoResult::Status::kError, 0, x.error};
    if (x.eof) return {IoResult::Status::kEof, 0, 0};
    return {IoResult::Status::kWouldBlock, 0, 0};
  }

  IoResult write(const ByteView* pieces, size_t count) override {
    if (IoResult r; !can_write(r)) return r;
    size_t room = size_t(std::max<int64_t>(0, c_->send_room(s_)));
    size_t total = 0;
    for (size_t i = 0; i < count; ++i) total += pieces[i].size();
    if (total == 0 || room == 0) return {IoResult::Status::kWouldBlock, 0, 0};  // as sendmsg of nothing
    size_t done = 0;
    for (size_t i = 0; i < count && done < room; ++i) {
      size_t take = std::min(pieces[i].size(), room - done);
      me().pending.append(pieces[i].first(take));
      done += take;
    }
    net_.pump(*c_, s_);
    return {IoResult::Status::kDone, done, 0};
  }

  IoResult send_file(const File& file, int64_t position, size_t size) override {
    if (IoResult r; !can_write(r)) return r;
    size_t room = size_t(std::max<int64_t>(0, c_->send_room(s_)));
    if (size == 0) return {IoResult::Status::kDone, 0, 0};
    if (room == 0) return {IoResult::Status::kWouldBlock, 0, 0};
    Bytes buffer(std::min(size, room));
    Result<size_t> got = file.read_at(buffer.data(), buffer.size(), position);
    if (!got.ok()) return {IoResult::Status::kError, 0, EIO};
    if (*got == 0) return {IoResult::Status::kEof, 0, 0};  // the file ends before the range does
    ByteView piece(buffer.data(), *got);
    return write(&piece, 1);
  }

  void close() override {
    SimConnection::Side& x = me();
    if (x.closed) return;
    x.closed = true;
    x.handler = nullptr;
    net_.world().cancel(x.ready_event);
    x.ready_event = 0;
    if (c_->reset) return;
    if (!x.incoming.empty()) {
      net_.reset(*c_, "closed with unread bytes");  // Linux answers with RST, not FIN
      return;
    }
    x.fin_queued = true;
    net_.pump(*c_, s_);
  }
  bool closed() const override { return c_->side[s_].closed; }
  const std::string& peer_address() const override { return c_->side[s_].peer; }
  const std::string& local_address() const override { return c_->side[s_].local; }

 private:
  SimConnection::Side& me() { return c_->side[s_]; }
  bool can_write(IoResult& r) const {
    const SimConnection::Side& x = c_->side[s_];
    if (x.closed) {
      r = {IoResult::Status::kError, 0, EBADF};
      return false;
    }
    if (x.error != 0) {
      r = {IoResult::Status::kError, 0, EPIPE};
      return false;
    }
    return true;
  }

  SimStreamNet& net_;
  std::shared_ptr<SimConnection> c_;
  int s_;
};

class SimListener final : public Listener {
 public:
  SimListener(SimStreamNet& net, std::shared_ptr<SimListenerRecord> record) : net_(net), record_(std::move(record)) {}
  ~SimListener() override {
    if (record_->open) net_.remove_listener(*record_);
    record_->open = false;
  }
  uint16_t port() const override { return record_->port; }
  const std::string& address() const override { return record_->address; }

 private:
  SimStreamNet& net_;
  std::shared_ptr<SimListenerRecord> record_;
};

}  // namespace samsa::sim

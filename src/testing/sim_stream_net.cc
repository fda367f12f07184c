#include "testing/sim_stream_net.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <deque>

#include "base/assert.h"
#include <fmt/format.h>

namespace samsa::sim {

namespace {

constexpr int64_t kNsPerMs = 1'000'000;
constexpr int64_t kRtoMaxMs = 120'000;  // Linux TCP_RTO_MAX

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

std::string ip_of(const SimWorld& world, HostId host, bool loopback) {
  return loopback ? std::string("127.0.0.1") : world.address(host);
}

}  // namespace

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
    bool hangup_reported = false;
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
  bool hangup(int s) const { return side[s].error != 0 || side[s].eof; }
};

// ----------------------------------------------------------------- streams

namespace {

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
    if (total == 0) return {IoResult::Status::kDone, 0, 0};
    if (room == 0) return {IoResult::Status::kWouldBlock, 0, 0};
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
    if (!got.ok() || *got == 0) return {IoResult::Status::kError, 0, EIO};  // a read error, or the range beyond the end
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

}  // namespace

// ------------------------------------------------------------ SimStreamNet

SimStreamNet::SimStreamNet(SimWorld& world) : world_(world) {}

SimStreamNet::~SimStreamNet() = default;

void SimStreamNet::set_default_faults(const LinkFaults& f) {
  default_faults_ = f;
  note(fmt::format("faults latency={}..{}us loss={} reset={}", f.min_latency_us, f.max_latency_us, f.loss,
                   f.reset_chance));
}

void SimStreamNet::set_link_faults(HostId from, HostId to, const LinkFaults& f) {
  link_faults_[{from.value(), to.value()}] = f;
  note(fmt::format("link {}>{} latency={}..{}us loss={} reset={}", from.value(), to.value(), f.min_latency_us,
                   f.max_latency_us, f.loss, f.reset_chance));
}

void SimStreamNet::clear_link_faults() {
  link_faults_.clear();
  note("links default");
}

const LinkFaults& SimStreamNet::faults(HostId from, HostId to) const {
  auto it = link_faults_.find({from.value(), to.value()});
  return it == link_faults_.end() ? default_faults_ : it->second;
}

void SimStreamNet::cut(HostId from, HostId to) {
  if (from == to) return;  // a host always reaches itself
  cuts_.insert({from.value(), to.value()});
  note(fmt::format("cut {}>{}", from.value(), to.value()));
}

void SimStreamNet::cut_both(HostId a, HostId b) {
  cut(a, b);
  cut(b, a);
}

void SimStreamNet::partition(const std::vector<std::vector<HostId>>& groups) {
  for (size_t g = 0; g < groups.size(); ++g) {
    for (size_t h = g + 1; h < groups.size(); ++h) {
      for (HostId a : groups[g]) {
        for (HostId b : groups[h]) cut_both(a, b);
      }
    }
  }
}

void SimStreamNet::isolate(HostId host) {
  for (size_t i = 1; i <= world_.host_count(); ++i) cut_both(host, HostId(int32_t(i)));
}

void SimStreamNet::heal() {
  cuts_.clear();
  note("heal");
  release_held();
}

void SimStreamNet::heal(HostId a, HostId b) {
  cuts_.erase({a.value(), b.value()});
  cuts_.erase({b.value(), a.value()});
  note(fmt::format("heal {}<>{}", a.value(), b.value()));
  release_held();
}

bool SimStreamNet::is_cut(HostId from, HostId to) const { return cuts_.count({from.value(), to.value()}) != 0; }

void SimStreamNet::refuse_connects(HostId host, bool refuse) {
  if (refuse) {
    refusing_.insert(host.value());
  } else {
    refusing_.erase(host.value());
  }
  note(fmt::format("refuse {} {}", host.value(), refuse ? "on" : "off"));
}

size_t SimStreamNet::reset_between(HostId a, HostId b) {
  std::vector<std::shared_ptr<SimConnection>> hit;
  for (auto& [id, c] : connections_) {
    HostId x = c->side[0].host, y = c->side[1].host;
    if ((x == a && y == b) || (x == b && y == a)) hit.push_back(c);
  }
  note(fmt::format("reset {}<>{}: {} connections", a.value(), b.value(), hit.size()));
  for (auto& c : hit) reset(*c, "reset on command");
  return hit.size();
}

size_t SimStreamNet::reset_host(HostId host) {
  std::vector<std::shared_ptr<SimConnection>> hit;
  for (auto& [id, c] : connections_) {
    if (c->side[0].host == host || c->side[1].host == host) hit.push_back(c);
  }
  note(fmt::format("reset {}: {} connections", host.value(), hit.size()));
  for (auto& c : hit) reset(*c, "reset on command");
  return hit.size();
}

void SimStreamNet::host_crashed(HostId host, uint64_t incarnation) {
  std::vector<std::shared_ptr<SimConnection>> hit;
  for (auto& [id, c] : connections_) {
    for (auto& s : c->side) {
      if (s.host == host && s.incarnation == incarnation) {
        hit.push_back(c);
        break;
      }
    }
  }
  for (auto& c : hit) {
    for (auto& s : c->side) {
      if (s.host != host || s.incarnation != incarnation) continue;
      s.closed = true;  // the process is gone: its end takes no more calls
      s.handler = nullptr;
      world_.cancel(s.ready_event);
      s.ready_event = 0;
    }
    reset(*c, "host crashed");
  }
  for (auto it = listeners_.begin(); it != listeners_.end();) {
    if (it->second->host == host) {
      it->second->open = false;
      it = listeners_.erase(it);
    } else {
      ++it;
    }
  }
}

EventId SimStreamNet::schedule_on(HostId host, uint64_t incarnation, int64_t delay_ns, std::string what,
                                  SimWorld::Task fn) {
  if (!world_.up(host) || world_.incarnation(host) != incarnation) return 0;
  return world_.schedule(delay_ns, host, std::move(what), std::move(fn));
}

int64_t SimStreamNet::draw_latency_ns(HostId from, HostId to) {
  const LinkFaults& f = faults(from, to);
  return world_.rng().range(f.min_latency_us, f.max_latency_us) * 1000;
}

uint16_t SimStreamNet::ephemeral_port(HostId host) {
  uint16_t& next = next_port_.try_emplace(host.value(), uint16_t(32768)).first->second;
  for (int tries = 0; tries < 30000; ++tries) {
    uint16_t p = next;
    next = next >= 60999 ? 32768 : uint16_t(next + 1);
    if (!port_in_use(host, p)) return p;
  }
  UNREACHABLE("no ephemeral port left");
}

bool SimStreamNet::port_in_use(HostId host, uint16_t port) const {
  return listeners_.count({host.value(), port}) != 0;
}

void SimStreamNet::add_listener(const std::shared_ptr<SimListenerRecord>& listener) {
  listeners_[{listener->host.value(), listener->port}] = listener;
}

void SimStreamNet::remove_listener(const SimListenerRecord& listener) {
  auto it = listeners_.find({listener.host.value(), listener.port});
  if (it != listeners_.end() && it->second.get() == &listener) listeners_.erase(it);
  world_.note(listener.host, "unlisten " + listener.address);
}

std::shared_ptr<SimListenerRecord> SimStreamNet::find_listener(HostId from, HostId target, bool loopback,
                                                               uint16_t port) const {
  auto it = listeners_.find({target.value(), port});
  if (it == listeners_.end() || !it->second->open) return nullptr;
  const std::string& ip = it->second->bind_ip;
  if (loopback) return from == target && (ip == "0.0.0.0" || ip == "127.0.0.1") ? it->second : nullptr;
  return ip == "127.0.0.1" ? nullptr : it->second;  // a loopback-only listener is not on the wire
}

std::shared_ptr<SimConnection> SimStreamNet::new_connection() {
  auto c = std::make_shared<SimConnection>();
  c->id = next_connection_++;
  connections_[c->id] = c;
  return c;
}

// Moves bytes from the sender's buffer onto the wire, as far as the
// receiver's window allows, in chunks of drawn sizes; then the FIN.
void SimStreamNet::pump(SimConnection& c, int from) {
  if (c.reset) return;
  SimConnection::Side& s = c.side[from];
  const SimConnection::Side& r = c.side[1 - from];
  const LinkFaults& f = faults(s.host, r.host);
  auto send_chunk = [&](Chunk chunk) {
    int64_t delay = world_.rng().range(f.min_latency_us, f.max_latency_us) * 1000;
    // Loss is retransmission: each loss waits one more RTO (doubling).
    int lost = 0;
    while (f.loss > 0 && lost <= f.max_retransmits && world_.rng().chance(f.loss)) {
      delay += std::min(f.rto_ms << std::min(lost, 20), kRtoMaxMs) * kNsPerMs;
      ++lost;
    }
    stats_.retransmits += uint64_t(lost);
    if (lost > f.max_retransmits) chunk.reset = true;
    if (f.reset_chance > 0 && world_.rng().chance(f.reset_chance)) chunk.reset = true;
    chunk.arrival_ns = std::max(world_.now_ns() + delay, s.last_arrival_ns);  // never overtakes
    s.last_arrival_ns = chunk.arrival_ns;
    s.in_flight_bytes += int64_t(chunk.data.size());
    ++stats_.chunks;
    stats_.bytes += chunk.data.size();
    s.in_flight.push_back(std::move(chunk));
    if (s.delivery == 0 && !s.held) schedule_head(c.shared_from_this(), from, s.in_flight.front().arrival_ns);
  };
  while (!s.pending.empty()) {
    int64_t window = int64_t(r.receive_buffer_bytes) - int64_t(r.incoming.size()) - s.in_flight_bytes;
    if (window <= 0) break;
    int64_t n = std::min({int64_t(s.pending.size()), window, world_.rng().range(1, options_.max_chunk_bytes)});
    send_chunk(Chunk{0, s.pending.take(size_t(n)), false, false});
  }
  if (s.pending.empty() && s.fin_queued && !s.fin_sent) {
    s.fin_sent = true;
    send_chunk(Chunk{0, {}, true, false});
  }
}

void SimStreamNet::schedule_head(const std::shared_ptr<SimConnection>& c, int from, int64_t at_ns) {
  SimConnection::Side& s = c->side[from];
  const Chunk& head = s.in_flight.front();
  std::string what = head.reset ? "lost " + c->name(from)
                     : head.fin ? "fin " + c->name(from)
                                : fmt::format("deliver {} {}B", c->name(from), head.data.size());
  s.delivery = world_.schedule(std::max<int64_t>(0, at_ns - world_.now_ns()), c->side[1 - from].host, std::move(what),
                               [this, c, from] { deliver_head(c, from); });
}

void SimStreamNet::deliver_head(const std::shared_ptr<SimConnection>& c, int from) {
  SimConnection::Side& s = c->side[from];
  SimConnection::Side& r = c->side[1 - from];
  s.delivery = 0;
  if (c->reset || s.in_flight.empty()) return;
  if (is_cut(s.host, r.host)) {
    // Held by the cut, in order, until healed (or the user timeout).
    s.held = true;
    s.held_since_ns = world_.now_ns();
    world_.note(r.host, "held " + c->name(from));
    if (options_.user_timeout_ms >= 0) {
      int64_t since = s.held_since_ns;
      world_.schedule(options_.user_timeout_ms * kNsPerMs, kWorldHost, "user-timeout " + c->name(from),
                      [this, c, from, since] {
                        if (c->side[from].held && c->side[from].held_since_ns == since) reset(*c, "user timeout");
                      });
    }
    return;
  }
  Chunk chunk = std::move(s.in_flight.front());
  s.in_flight.pop_front();
  s.in_flight_bytes -= int64_t(chunk.data.size());
  if (chunk.reset) {
    reset(*c, "retransmissions exhausted");
    return;
  }
  if (r.closed) {
    if (!chunk.data.empty()) {
      reset(*c, "bytes for a closed socket");  // the closed end answers RST
      return;
    }
    if (s.closed) forget(c->id);  // both FINs done
  } else {
    r.incoming.append(chunk.data);
    if (chunk.fin) r.eof = true;
    notify(*c, 1 - from);
  }
  notify(*c, from);  // room in the sender's buffer
  if (!s.in_flight.empty()) schedule_head(c, from, std::max(world_.now_ns(), s.in_flight.front().arrival_ns));
}

void SimStreamNet::release_held() {
  for (auto& [id, c] : connections_) {
    for (int from = 0; from < 2; ++from) {
      SimConnection::Side& s = c->side[from];
      if (!s.held || is_cut(s.host, c->side[1 - from].host)) continue;
      s.held = false;
      int64_t at = world_.now_ns() + draw_latency_ns(s.host, c->side[1 - from].host);
      s.last_arrival_ns = std::max(s.last_arrival_ns, at);
      if (s.delivery == 0 && !s.in_flight.empty()) schedule_head(c, from, at);
    }
  }
}

void SimStreamNet::notify(SimConnection& c, int side) {
  SimConnection::Side& x = c.side[side];
  if (x.closed || !x.attached || x.handler == nullptr || x.ready_event != 0) return;
  bool news = c.readable(side) || c.writable(side) || (c.hangup(side) && !x.hangup_reported);
  if (!news) return;
  x.ready_event = schedule_on(x.host, x.incarnation, 0, "ready " + x.local,
                              [this, cp = c.shared_from_this(), side] { run_ready(cp, side); });
}

void SimStreamNet::run_ready(const std::shared_ptr<SimConnection>& c, int side) {
  SimConnection::Side& x = c->side[side];
  x.ready_event = 0;
  if (x.closed || x.handler == nullptr) return;
  bool readable = c->readable(side);
  bool writable = c->writable(side);
  bool hangup = c->hangup(side);
  if (!readable && !writable && !(hangup && !x.hangup_reported)) return;
  if (hangup) x.hangup_reported = true;
  x.handler->on_stream_ready(readable, writable, hangup);
  notify(*c, side);  // level-triggered: still ready, called again
}

void SimStreamNet::reset(SimConnection& c, const std::string& why) {
  if (c.reset) return;
  c.reset = true;
  ++stats_.resets;
  world_.note(kWorldHost, "net reset " + c.name(0) + ": " + why);
  for (int i = 0; i < 2; ++i) {
    SimConnection::Side& s = c.side[i];
    s.pending.clear();
    s.in_flight.clear();
    s.in_flight_bytes = 0;
    world_.cancel(s.delivery);
    s.delivery = 0;
    s.held = false;
  }
  for (int i = 0; i < 2; ++i) {
    if (c.side[i].closed) continue;
    c.side[i].error = ECONNRESET;  // what is left in its buffer can still be read
    notify(c, i);
  }
  forget(c.id);
}

// ---------------------------------------------------------- SimNodeNetwork

SimNodeNetwork::~SimNodeNetwork() = default;

bool SimNodeNetwork::alive() const {
  return net_.world().up(host_) && net_.world().incarnation(host_) == incarnation_;
}

Result<std::unique_ptr<Listener>> SimNodeNetwork::listen(const ListenOptions& options, AcceptFn on_accept) {
  SimWorld& world = net_.world();
  std::string wanted = fmt::format("{}:{}", options.host, options.port);
  if (!alive()) return Error(ErrorKind::kIo, "listen " + wanted + ": host crashed");
  std::string ip;
  if (options.host.empty() || options.host == "0.0.0.0") {
    ip = "0.0.0.0";
  } else if (options.host == "127.0.0.1" || options.host == "localhost") {
    ip = "127.0.0.1";
  } else if (options.host == world.address(host_)) {
    ip = options.host;
  } else {
    return errno_error("bind " + wanted, EADDRNOTAVAIL);
  }
  uint16_t port = options.port != 0 ? options.port : net_.ephemeral_port(host_);
  if (net_.port_in_use(host_, port)) return errno_error("bind " + wanted, EADDRINUSE);
  auto record = std::make_shared<SimListenerRecord>();
  record->host = host_;
  record->incarnation = incarnation_;
  record->bind_ip = ip;
  record->port = port;
  record->address = fmt::format("{}:{}", ip, port);
  record->on_accept = std::move(on_accept);
  record->send_buffer_bytes = options.send_buffer_bytes > 0 ? options.send_buffer_bytes : net_.options().send_buffer_bytes;
  record->receive_buffer_bytes =
      options.receive_buffer_bytes > 0 ? options.receive_buffer_bytes : net_.options().receive_buffer_bytes;
  net_.add_listener(record);
  world.note(host_, "listen " + record->address);
  return std::unique_ptr<Listener>(std::make_unique<SimListener>(net_, std::move(record)));
}

ConnectId SimNodeNetwork::connect(const std::string& host, uint16_t port, int64_t timeout_ms, ConnectFn done) {
  ConnectId id = next_connect_++;
  if (!alive()) return id;  // a dead process's callbacks never run
  SimWorld& world = net_.world();
  ++net_.mutable_stats().connects;
  Pending p;
  p.done = std::move(done);
  p.port = port;
  p.loopback = host == "127.0.0.1" || host == "localhost";
  int n = 0;
  constexpr std::string_view kPrefix = "10.0.0.";
  if (p.loopback) {
    p.target = host_;
  } else if (host.starts_with(kPrefix)) {
    const char* digits = host.data() + kPrefix.size();
    auto [end, ec] = std::from_chars(digits, host.data() + host.size(), n);
    if (ec == std::errc() && end == host.data() + host.size() && n >= 1 && size_t(n) <= world.host_count()) {
      p.target = HostId(n);
    }
  }
  std::string target = fmt::format("{}:{}", host, port);
  if (p.target == kWorldHost) {
    pending_[id] = std::move(p);
    net_.schedule_on(host_, incarnation_, net_.draw_latency_ns(host_, host_), "unreachable " + target,
                     [this, id, target] { finish(id, errno_error("connect " + target, EHOSTUNREACH)); });
    return id;
  }
  p.what = fmt::format("{}:{}>{}", ip_of(world, host_, p.loopback), net_.ephemeral_port(host_), target);
  p.timeout = net_.schedule_on(host_, incarnation_, std::max<int64_t>(0, timeout_ms) * kNsPerMs,
                               "connect-timeout " + p.what, [this, id, timeout_ms, target] {
                                 auto it = pending_.find(id);
                                 if (it == pending_.end()) return;
                                 it->second.timeout = 0;
                                 if (it->second.connection) net_.reset(*it->second.connection, "connect timed out");
                                 finish(id, Error(ErrorKind::kTimedOut,
                                                  fmt::format("connect {}: timed out after {} ms", target, timeout_ms)));
                               });
  world.note(host_, "connect " + p.what);
  pending_[id] = std::move(p);
  send_syn(id, 0);
  return id;
}

void SimNodeNetwork::send_syn(ConnectId id, int attempt) {
  const Pending& p = pending_.at(id);
  net_.schedule_on(host_, incarnation_, net_.draw_latency_ns(host_, p.target), "syn " + p.what,
                   [this, id, attempt] { arrive_syn(id, attempt); });
}

void SimNodeNetwork::arrive_syn(ConnectId id, int attempt) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return;
  Pending& p = it->second;
  SimWorld& world = net_.world();
  if (!p.loopback && (net_.is_cut(host_, p.target) || net_.is_cut(p.target, host_))) {
    // The SYN or its SYN-ACK is lost: TCP retries, the timeout decides.
    int64_t retry_ms = net_.options().syn_retry_ms << std::min(attempt, 20);
    net_.schedule_on(host_, incarnation_, retry_ms * kNsPerMs, "syn-retry " + p.what,
                     [this, id, attempt] {
                       if (pending_.count(id) != 0) send_syn(id, attempt + 1);
                     });
    return;
  }
  std::shared_ptr<SimListenerRecord> listener =
      world.up(p.target) ? net_.find_listener(host_, p.target, p.loopback, p.port) : nullptr;
  std::string target = p.what.substr(p.what.find('>') + 1);
  if (listener == nullptr || net_.refusing(p.target)) {
    ++net_.mutable_stats().refused;
    net_.schedule_on(host_, incarnation_, net_.draw_latency_ns(p.target, host_), "refused " + p.what,
                     [this, id, target] { finish(id, errno_error("connect " + target, ECONNREFUSED)); });
    return;
  }
  std::shared_ptr<SimConnection> c = net_.new_connection();
  std::string local = p.what.substr(0, p.what.find('>'));
  c->side[0] = SimConnection::Side{};
  c->side[0].host = host_;
  c->side[0].incarnation = incarnation_;
  c->side[0].local = local;
  c->side[0].peer = target;
  c->side[0].send_buffer_bytes = net_.options().send_buffer_bytes;
  c->side[0].receive_buffer_bytes = net_.options().receive_buffer_bytes;
  c->side[1].host = p.target;
  c->side[1].incarnation = listener->incarnation;
  c->side[1].local = p.loopback ? target : fmt::format("{}:{}", world.address(p.target), p.port);
  c->side[1].peer = local;
  c->side[1].send_buffer_bytes = listener->send_buffer_bytes;
  c->side[1].receive_buffer_bytes = listener->receive_buffer_bytes;
  p.connection = c;
  SimStreamNet* net = &net_;
  net_.schedule_on(p.target, listener->incarnation, 0, "accept " + p.what, [net, listener, c] {
    if (c->reset) return;
    if (!listener->open) {
      net->reset(*c, "listener closed");
      return;
    }
    ++net->mutable_stats().accepted;
    listener->on_accept(std::make_unique<SimStream>(*net, c, 1));
  });
  net_.schedule_on(host_, incarnation_, net_.draw_latency_ns(p.target, host_), "connected " + p.what,
                   [this, id, c, target] {
                     auto pit = pending_.find(id);
                     if (pit == pending_.end() || pit->second.connection != c) {
                       net_.reset(*c, "connect abandoned");
                       return;
                     }
                     if (c->reset) {
                       finish(id, errno_error("connect " + target, ECONNRESET));
                       return;
                     }
                     finish(id, StreamPtr(std::make_unique<SimStream>(net_, c, 0)));
                   });
}

void SimNodeNetwork::finish(ConnectId id, Result<StreamPtr> outcome) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return;
  Pending p = std::move(it->second);
  pending_.erase(it);
  net_.world().cancel(p.timeout);
  p.done(std::move(outcome));
}

void SimNodeNetwork::cancel_connect(ConnectId id) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return;
  net_.world().cancel(it->second.timeout);
  if (it->second.connection) net_.reset(*it->second.connection, "connect cancelled");
  pending_.erase(it);
}

}  // namespace samsa::sim

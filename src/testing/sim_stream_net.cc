#include "testing/sim_stream_net.h"

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "base/assert.h"
#include "testing/sim_connection.h"

namespace samsa::sim {

namespace {
constexpr int64_t kRtoMaxMs = 120'000;  // Linux TCP_RTO_MAX
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
  bool news = c.readable(side) || c.writable(side) || c.hangup(side);
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
  if (!readable && !writable && !hangup) return;
  x.handler->on_stream_ready(readable, writable, hangup);
  notify(*c, side);  // level-triggered: still ready (or failed and not closed), called again
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

}  // namespace samsa::sim

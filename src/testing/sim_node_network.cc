// SimNodeNetwork: listen, connect and cancel_connect of one host
// incarnation (the class is declared in sim_stream_net.h).

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>

#include "testing/sim_connection.h"
#include "testing/sim_stream_net.h"

namespace samsa::sim {

namespace {
std::string ip_of(const SimWorld& world, HostId host, bool loopback) {
  return loopback ? std::string("127.0.0.1") : world.address(host);
}
}  // namespace

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
  establish(id, listener);
}

// The SYN reached a listener: the server end is accepted at once, the
// client end is connected when the SYN-ACK is back.
void SimNodeNetwork::establish(ConnectId id, const std::shared_ptr<SimListenerRecord>& listener) {
  Pending& p = pending_.at(id);
  SimWorld& world = net_.world();
  std::string target = p.what.substr(p.what.find('>') + 1);
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

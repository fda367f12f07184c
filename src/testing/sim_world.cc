#include "testing/sim_world.h"

#include "base/assert.h"
#include <fmt/format.h>
#include "testing/sim_file_system.h"
#include "testing/sim_runtime.h"
#include "testing/sim_stream_net.h"

namespace samsa::sim {

struct SimWorld::Host {
  HostId id;
  std::unique_ptr<SimVolume> volume;
  std::unique_ptr<SimRuntime> runtime;                // the current incarnation
  std::vector<std::unique_ptr<SimRuntime>> departed;  // crashed incarnations, kept for teardown
  uint64_t incarnation = 1;
  bool up = true;
  int64_t wall_offset_ms = 0;
  bool paused = false;
  std::map<Key, Event> frozen;  // while paused: its events, by (due time, insertion)
};

SimWorld::SimWorld(uint64_t seed) : seed_(seed), rng_(seed), net_(std::make_unique<SimStreamNet>(*this)) {}

SimWorld::~SimWorld() {
  // Events hold connections and callbacks into runtimes: drop them first,
  // then the runtimes (whose streams and files refer to the net and disks).
  queue_.clear();
  due_.clear();
  for (auto& h : hosts_) h->frozen.clear();
  for (auto& h : hosts_) {
    h->runtime.reset();
    h->departed.clear();
  }
  hosts_.clear();
  net_.reset();
}

EventId SimWorld::schedule(int64_t delay_ns, HostId host, std::string what, Task fn) {
  ASSERT(delay_ns >= 0);
  EventId id = next_event_++;
  int64_t at = now_ns_ + delay_ns;
  if (host != kWorldHost && host_ref(host).paused) {
    host_ref(host).frozen.emplace(Key{at, id}, Event{host, std::move(what), std::move(fn)});
    return id;
  }
  queue_.emplace(Key{at, id}, Event{host, std::move(what), std::move(fn)});
  due_[id] = at;
  return id;
}

bool SimWorld::cancel(EventId id) {
  auto it = due_.find(id);
  if (it == due_.end()) return cancel_frozen(id);
  queue_.erase(Key{it->second, id});
  due_.erase(it);
  return true;
}

void SimWorld::run_event(Key key) {
  auto it = queue_.find(key);
  Event e = std::move(it->second);
  queue_.erase(it);
  due_.erase(key.second);
  ASSERT(key.first >= now_ns_);
  // Events that never let time move are a livelock (say, a handler that
  // keeps an interest it never serves, which level-triggered readiness
  // calls again and again): fail loudly rather than spin.
  same_instant_ = key.first == now_ns_ ? same_instant_ + 1 : 0;
  ASSERT_MSG(same_instant_ < livelock_limit_, "simulation livelock: too many events at one instant");
  now_ns_ = key.first;
  ++events_run_;
  emit(e.host, e.what);
  e.fn();
}

bool SimWorld::step() {
  if (queue_.empty()) return false;
  run_event(queue_.begin()->first);
  return true;
}

void SimWorld::run_for_ms(int64_t ms) {
  ASSERT(ms >= 0);
  int64_t until = now_ns_ + ms * 1'000'000;
  while (!queue_.empty() && queue_.begin()->first.first <= until) run_event(queue_.begin()->first);
  now_ns_ = until;
}

bool SimWorld::run_until(const std::function<bool()>& done, int64_t max_ms) {
  int64_t until = now_ns_ + max_ms * 1'000'000;
  while (!done()) {
    if (queue_.empty() || queue_.begin()->first.first > until) {
      now_ns_ = std::max(now_ns_, until);
      return done();
    }
    run_event(queue_.begin()->first);
  }
  return true;
}

uint64_t SimWorld::run_until_idle(uint64_t max_events) {
  uint64_t n = 0;
  while (n < max_events && step()) ++n;
  return n;
}

// ------------------------------------------------------------------- hosts

HostId SimWorld::add_host() {
  auto h = std::make_unique<Host>();
  h->id = HostId(int32_t(hosts_.size() + 1));
  h->volume = std::make_unique<SimVolume>(*this, h->id);
  Host& ref = *h;
  hosts_.push_back(std::move(h));
  ref.runtime = std::make_unique<SimRuntime>(*this, ref.id, ref.incarnation, *ref.volume);
  note(ref.id, "host up " + address(ref.id));
  return ref.id;
}

SimWorld::Host& SimWorld::host_ref(HostId host) {
  ASSERT_MSG(host.value() >= 1 && size_t(host.value()) <= hosts_.size(), "unknown simulated host");
  return *hosts_[size_t(host.value() - 1)];
}

const SimWorld::Host& SimWorld::host_ref(HostId host) const {
  ASSERT_MSG(host.value() >= 1 && size_t(host.value()) <= hosts_.size(), "unknown simulated host");
  return *hosts_[size_t(host.value() - 1)];
}

std::string SimWorld::address(HostId host) const { return fmt::format("10.0.0.{}", host.value()); }
SimRuntime& SimWorld::runtime(HostId host) { return *host_ref(host).runtime; }
SimVolume& SimWorld::volume(HostId host) { return *host_ref(host).volume; }
bool SimWorld::up(HostId host) const {
  return host.value() >= 1 && size_t(host.value()) <= hosts_.size() && host_ref(host).up;
}
uint64_t SimWorld::incarnation(HostId host) const { return host_ref(host).incarnation; }
int64_t SimWorld::wall_offset_ms(HostId host) const { return host_ref(host).wall_offset_ms; }

void SimWorld::set_wall_offset_ms(HostId host, int64_t offset_ms) {
  host_ref(host).wall_offset_ms = offset_ms;
  note(host, fmt::format("wall clock offset {} ms", offset_ms));
}

void SimWorld::drop_events(HostId host) {
  for (auto it = queue_.begin(); it != queue_.end();) {
    if (it->second.host == host) {
      due_.erase(it->first.second);
      it = queue_.erase(it);
    } else {
      ++it;
    }
  }
}

bool SimWorld::cancel_frozen(EventId id) {
  for (auto& h : hosts_) {
    for (auto it = h->frozen.begin(); it != h->frozen.end(); ++it) {
      if (it->first.second == id) {
        h->frozen.erase(it);
        return true;
      }
    }
  }
  return false;
}

bool SimWorld::paused(HostId host) const { return host_ref(host).paused; }

void SimWorld::pause(HostId host) {
  Host& h = host_ref(host);
  ASSERT_MSG(h.up && !h.paused, "pause of a host that is down or paused");
  note(host, "pause (SIGSTOP)");
  h.paused = true;
  for (auto it = queue_.begin(); it != queue_.end();) {
    if (it->second.host == host) {
      due_.erase(it->first.second);
      h.frozen.emplace(it->first, std::move(it->second));
      it = queue_.erase(it);
    } else {
      ++it;
    }
  }
}

void SimWorld::resume(HostId host) {
  Host& h = host_ref(host);
  ASSERT_MSG(h.paused, "resume of a host that is not paused");
  note(host, "resume (SIGCONT)");
  h.paused = false;
  for (auto& [key, event] : h.frozen) {
    Key due{std::max(key.first, now_ns_), key.second};
    due_[key.second] = due.first;
    queue_.emplace(due, std::move(event));
  }
  h.frozen.clear();
}

void SimWorld::crash(HostId host, CrashKind kind) {
  Host& h = host_ref(host);
  ASSERT_MSG(h.up, "crash of a host that is down");
  h.paused = false;
  h.frozen.clear();
  note(host, kind == CrashKind::kPowerLoss ? "crash (power loss)" : "crash (process)");
  h.up = false;
  drop_events(host);
  h.runtime->kill();
  net_->host_crashed(host, h.incarnation);
  h.volume->fence();
  if (kind == CrashKind::kPowerLoss) h.volume->lose_unsynced();
}

SimRuntime& SimWorld::restart(HostId host) {
  Host& h = host_ref(host);
  ASSERT_MSG(!h.up, "restart of a host that is up");
  h.departed.push_back(std::move(h.runtime));
  ++h.incarnation;
  h.up = true;
  h.runtime = std::make_unique<SimRuntime>(*this, host, h.incarnation, *h.volume);
  note(host, fmt::format("restart (incarnation {})", h.incarnation));
  return *h.runtime;
}

// ------------------------------------------------------------------- trace

void SimWorld::note(HostId host, const std::string& what) { emit(host, what); }

void SimWorld::emit(HostId host, const std::string& what) {
  std::string line = fmt::format("{}.{:06} h{} {}", now_ns_ / 1'000'000, now_ns_ % 1'000'000, host.value(), what);
  for (unsigned char ch : line) {
    trace_hash_ ^= ch;
    trace_hash_ *= 1099511628211ULL;
  }
  trace_hash_ ^= '\n';
  trace_hash_ *= 1099511628211ULL;
  ++trace_count_;
  if (sink_) sink_(line);
  if (record_trace_) trace_.push_back(std::move(line));
}

std::string SimWorld::trace_text() const {
  std::string out;
  for (const std::string& l : trace_) {
    out += l;
    out += '\n';
  }
  return out;
}

}  // namespace samsa::sim

#pragma once
// SimWorld: the simulated universe the real code runs in, on one thread.
//
// - One virtual clock (nanoseconds) that jumps to the next event: nothing
//   takes time except waiting for an event.
// - One event queue ordered by (time, insertion number), so two events due at
//   the same instant run in the order they were scheduled.
// - One Rng from the seed: every choice the simulator makes (latencies,
//   chunk sizes, what a crash keeps) is drawn from it, in event order.
// - One trace: a line per event run and per fault commanded,
//   "<ms>.<ns 6 digits> <host> <what>", e.g. "12.000350 h2 deliver
//   10.0.0.1:32768>10.0.0.2:9092 512B". The same seed gives the same trace
//   byte for byte (no pointers, no unordered iteration, no real time in it).
//
// Hosts: each simulated machine (a broker, a client) is a host with an id
// (1, 2, ...), an address 10.0.0.<id>, a disk (SimVolume) that outlives
// crashes and a runtime (SimRuntime) per incarnation. crash() ends the
// incarnation: its pending events are dropped, its streams reset, its
// listeners gone, its disk crashed (power loss) or kept (process crash);
// the dead runtime stays allocated (every call on it a no-op or an error)
// until the world is destroyed, so the objects built on it can be torn down
// after the crash. restart() gives the host a fresh runtime over the same
// disk. Objects built on a runtime must be destroyed before the world.
//
// Not thread-safe: everything runs on the thread that runs the world.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/rng.h"
#include "base/strong_int.h"

namespace samsa::sim {

using HostId = StrongInt<struct SimHostTag, int32_t>;  // 1, 2, ...; 0 = the world itself
inline constexpr HostId kWorldHost{0};
using EventId = uint64_t;

class SimRuntime;
class SimStreamNet;
class SimVolume;

enum class CrashKind {
  kPowerLoss,  // the disk keeps only what was made durable (plus what the Rng spares)
  kProcess,    // kill -9: the page cache survives, nothing written is lost
};

class SimWorld {
 public:
  using Task = std::function<void()>;
  // Wall clock of every host at time 0 (2026-01-01T00:00:00Z), plus its offset.
  static constexpr int64_t kWallEpochMs = 1'767'225'600'000;

  explicit SimWorld(uint64_t seed);
  ~SimWorld();
  SimWorld(const SimWorld&) = delete;
  SimWorld& operator=(const SimWorld&) = delete;

  uint64_t seed() const { return seed_; }
  int64_t now_ns() const { return now_ns_; }
  int64_t now_ms() const { return now_ns_ / 1'000'000; }
  Rng& rng() { return rng_; }
  SimStreamNet& net() { return *net_; }

  // --- events ---
  // Runs `fn` `delay_ns` (>= 0) from now; `what` is its trace line.
  EventId schedule(int64_t delay_ns, HostId host, std::string what, Task fn);
  // True if the event was pending (it will not run now).
  bool cancel(EventId id);
  bool pending(EventId id) const { return due_.count(id) != 0; }
  size_t queued() const { return queue_.size(); }
  // Runs the next event (the clock jumps to its time); false if none.
  bool step();
  // Runs every event due at or before now + ms, then sets the clock there.
  void run_for_ms(int64_t ms);
  // Runs events until `done()` holds (checked before each), the queue is
  // empty, or `max_ms` of simulated time passed. Returns done().
  bool run_until(const std::function<bool()>& done, int64_t max_ms);
  // Runs until the queue is empty or `max_events` ran; returns events run.
  uint64_t run_until_idle(uint64_t max_events = 1'000'000);
  uint64_t events_run() const { return events_run_; }
  // This many events in a row at one instant is a livelock: ASSERT.
  void set_livelock_limit(uint64_t events) { livelock_limit_ = events; }

  // --- hosts ---
  HostId add_host();
  size_t host_count() const { return hosts_.size(); }
  std::string address(HostId host) const;  // "10.0.0.<id>"
  SimRuntime& runtime(HostId host);        // the current incarnation (dead while crashed)
  SimVolume& volume(HostId host);
  bool up(HostId host) const;
  uint64_t incarnation(HostId host) const;
  void crash(HostId host, CrashKind kind = CrashKind::kPowerLoss);
  SimRuntime& restart(HostId host);
  // SIGSTOP / SIGCONT: while paused, the host's events (timers, bytes
  // arriving, its disk's completions) wait, its clock and everyone else's
  // run on; resume() runs what came due meanwhile at once, in the order it
  // was scheduled (a stopped process's overdue timers fire on SIGCONT).
  // Peers see a host that stops answering; its connections stay open.
  void pause(HostId host);
  void resume(HostId host);
  bool paused(HostId host) const;
  // The host's wall clock runs `offset_ms` ahead of the world's (skew; a jump
  // when changed while running).
  void set_wall_offset_ms(HostId host, int64_t offset_ms);
  int64_t wall_offset_ms(HostId host) const;

  // --- trace ---
  // A line for something commanded rather than an event (a fault, a crash).
  void note(HostId host, const std::string& what);
  // Lines are always hashed; kept in memory only when recording (default on).
  void set_record_trace(bool record) { record_trace_ = record; }
  const std::vector<std::string>& trace() const { return trace_; }
  std::string trace_text() const;
  uint64_t trace_hash() const { return trace_hash_; }
  uint64_t trace_lines() const { return trace_count_; }
  // Also print each line as it happens (samsa-sim --trace); null to stop.
  void set_trace_sink(std::function<void(const std::string&)> sink) { sink_ = std::move(sink); }

 private:
  struct Event {
    HostId host;
    std::string what;
    Task fn;
  };
  struct Host;
  using Key = std::pair<int64_t, uint64_t>;  // (time, insertion number)

  Host& host_ref(HostId host);
  const Host& host_ref(HostId host) const;
  void drop_events(HostId host);
  bool cancel_frozen(EventId id);
  void run_event(Key key);
  void emit(HostId host, const std::string& what);

  uint64_t seed_;
  Rng rng_;
  int64_t now_ns_ = 0;
  uint64_t next_event_ = 1;
  uint64_t events_run_ = 0;
  uint64_t same_instant_ = 0;  // events run since the clock last moved
  uint64_t livelock_limit_ = 10'000'000;
  std::map<Key, Event> queue_;
  std::map<EventId, int64_t> due_;  // pending event -> its time
  std::unique_ptr<SimStreamNet> net_;
  std::vector<std::unique_ptr<Host>> hosts_;
  bool record_trace_ = true;
  std::vector<std::string> trace_;
  uint64_t trace_hash_ = 14695981039346656037ULL;  // FNV-1a
  uint64_t trace_count_ = 0;
  std::function<void(const std::string&)> sink_;
};

}  // namespace samsa::sim

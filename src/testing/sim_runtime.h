#pragma once
// SimRuntime: one incarnation of a simulated host's Runtime (io/runtime.h).
// Timers and posted tasks are events on the SimWorld's queue, tagged with
// the host, so they run in (time, insertion) order on the one thread; now is
// the world's clock; the wall clock is the world's plus the host's offset;
// the network, file system and blocking executor are the host's simulated
// ones. in_loop_thread() is always true (post() ASSERTs it is called on the
// thread that made the runtime: a real thread in code under simulation is a
// bug the simulator cannot replay).
//
// After SimWorld::crash() the runtime is dead: nothing it had scheduled runs,
// add_timer()/post() do nothing, its streams are reset and its files answer
// EIO. The objects built on it may then be destroyed at leisure.
//
// seed(): derived from the world seed, the host id and the incarnation, so a
// restarted host draws new numbers (as a real process seeded by the OS does)
// and a replay draws the same ones.

#include <cstdint>
#include <deque>
#include <set>
#include <string>
#include <thread>

#include "io/runtime.h"
#include "testing/sim_file_system.h"
#include "testing/sim_stream_net.h"
#include "testing/sim_world.h"

namespace samsa::sim {

class SimRuntime;

class SimClock final : public Clock {
 public:
  SimClock(const SimWorld& world, HostId host) : world_(world), host_(host) {}
  int64_t wall_ms() const override;
  int64_t monotonic_ms() const override { return world_.now_ms(); }

 private:
  const SimWorld& world_;
  HostId host_;
};

// Blocking work runs one item at a time, in submission order, each after a
// latency drawn from the host's disk (SimVolume::set_latency_us, the "slow
// disk" knob); its outcome is delivered as the next event. drain() runs
// everything left at once and delivers every outcome inline; later submits
// run inline too (shutdown).
class SimBlockingExecutor final : public BlockingExecutor {
 public:
  explicit SimBlockingExecutor(SimRuntime& runtime) : runtime_(runtime) {}
  void submit(Work work, Done done) override;
  void drain() override;
  size_t pending() const { return queue_.size() + outcomes_.size(); }
  bool drained() const { return drained_; }

 private:
  struct Item {
    uint64_t number;
    Work work;
    Done done;
  };
  struct Outcome {
    uint64_t number;
    Status status;
    Done done;
  };
  void start_next();
  void run_head();
  void deliver_next();

  SimRuntime& runtime_;
  std::deque<Item> queue_;        // submitted, not run yet (the head may be "in progress")
  std::deque<Outcome> outcomes_;  // run, outcome not delivered yet
  EventId run_event_ = 0;
  EventId deliver_event_ = 0;
  uint64_t submitted_ = 0;
  bool drained_ = false;
};

class SimRuntime final : public Runtime {
 public:
  SimRuntime(SimWorld& world, HostId host, uint64_t incarnation, SimVolume& volume);
  ~SimRuntime() override;
  SimRuntime(const SimRuntime&) = delete;
  SimRuntime& operator=(const SimRuntime&) = delete;

  Clock& clock() override { return clock_; }
  int64_t now_ns() const override { return world_.now_ns(); }
  TimerId add_timer(int64_t delay_ms, Task fn) override;
  bool cancel_timer(TimerId id) override;
  void post(Task task) override;
  bool in_loop_thread() const override { return true; }
  Network& network() override { return network_; }
  FileSystem& files() override { return files_; }
  BlockingExecutor& blocking() override { return blocking_; }
  uint64_t seed() const override { return seed_; }

  SimWorld& world() { return world_; }
  HostId host() const { return host_; }
  uint64_t incarnation() const { return incarnation_; }
  bool dead() const { return dead_; }
  SimNodeNetwork& sim_network() { return network_; }
  SimFileSystem& sim_files() { return files_; }
  SimBlockingExecutor& sim_blocking() { return blocking_; }
  size_t pending_timers() const { return timers_.size(); }

  // An event of this host; nothing (0) once dead.
  EventId schedule(int64_t delay_ns, std::string what, Task fn);
  bool cancel(EventId id) { return id != 0 && world_.cancel(id); }
  // SimWorld::crash(): everything pending is forgotten (the world drops the
  // events), the network resets this incarnation's streams.
  void kill();

 private:
  SimWorld& world_;
  HostId host_;
  uint64_t incarnation_;
  uint64_t seed_;
  std::thread::id loop_thread_;
  bool dead_ = false;
  SimClock clock_;
  std::set<TimerId> timers_;  // pending
  SimNodeNetwork network_;
  SimFileSystem files_;
  SimBlockingExecutor blocking_;
};

}  // namespace samsa::sim

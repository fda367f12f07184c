#pragma once
// Runtime: the one seam between Samsa and the world. Everything above io/
// (storage, controller, group, replication, broker) gets time, timers,
// posted work, the network, the file system, blocking work and its random
// seed from the Runtime it was given, and from nowhere else: no system
// clock, no threads, no sockets or files of its own, no process-wide
// mutable state. That is what lets the same Broker run on the real runtime
// (io/posix_runtime.*: epoll, POSIX files, sendfile, a thread for fsyncs)
// and, several in one process, on the deterministic simulator's
// (testing/sim_runtime.*: a virtual clock that jumps to the next event, a
// faulty network and disk, all driven by one seed).
//
// Threads: a runtime has one loop thread. Every callback it makes (timer,
// posted task, stream readiness, accept, connect, blocking-work outcome)
// runs on that thread, one at a time, so code above needs no locks.
// post() is the only call that may come from another thread.

#include <cstdint>
#include <functional>

#include "base/clock.h"
#include "base/result.h"
#include "io/file_system.h"
#include "io/network.h"

namespace samsa {

using TimerId = uint64_t;

// Work that blocks (fsync of a rolled segment, a checkpoint write) run off
// the loop, in submission order; each outcome is delivered on the loop
// thread. Work touches only what it owns (its own File references, its own
// copy of the data). Every outcome is delivered, failures included.
class BlockingExecutor {
 public:
  using Work = std::function<Status()>;
  using Done = std::function<void(Status)>;
  virtual ~BlockingExecutor() = default;
  virtual void submit(Work work, Done done) = 0;
  // Runs everything submitted, then delivers every outcome not delivered
  // yet on the calling (loop) thread; later submits run inline. For
  // shutdown, before the logs are closed.
  virtual void drain() = 0;
};

class Runtime {
 public:
  using Task = std::function<void()>;
  virtual ~Runtime() = default;

  // Wall time (record timestamps, retention) and monotonic time (timeouts).
  virtual Clock& clock() = 0;
  // Monotonic nanoseconds: the timers' own clock.
  virtual int64_t now_ns() const = 0;
  int64_t now_ms() const { return now_ns() / 1'000'000; }

  // `fn` runs once, on the loop thread, no earlier than `delay_ms` (>= 0)
  // from now; timers due at the same instant run in the order added.
  virtual TimerId add_timer(int64_t delay_ms, Task fn) = 0;
  // True if the timer was pending (and now will not run).
  virtual bool cancel_timer(TimerId id) = 0;
  // Thread-safe: runs `task` on the loop thread, in posting order.
  virtual void post(Task task) = 0;
  virtual bool in_loop_thread() const = 0;

  virtual Network& network() = 0;
  virtual FileSystem& files() = 0;
  virtual BlockingExecutor& blocking() = 0;

  // This node's random seed: every Rng above io/ starts from it (the real
  // runtime draws it from the OS at startup; the simulator from its seed).
  virtual uint64_t seed() const = 0;
};

}  // namespace samsa

#pragma once
// PosixRuntime: the real Runtime (io/runtime.h), what `samsa server` runs on.
//
// - time: a SystemClock of its own (wall and monotonic clock_gettime) and the
//   EventLoop's monotonic nanoseconds for timers;
// - timers, post(), run()/stop(): the EventLoop (epoll), which also serves
//   the posix classes here and SignalWatcher (loop());
// - network(): PosixNetwork (nonblocking sockets, sendmsg, sendfile);
// - files(): PosixFileSystem;
// - blocking(): a ThreadBlockingExecutor whose thread starts on the first
//   call, so that whoever blocks signals first (run_server's SignalWatcher)
//   does so before any thread exists (threads inherit the mask);
// - seed(): given by the creator (run_server draws it with os_random_seed()).
//
// Loop-thread only except post(), stop() and run() itself. Owners drain
// blocking() before they go (its outcomes call into them); destruction
// drains whatever is left, then closes the network and the loop.

#include <cstdint>
#include <memory>

#include "base/clock.h"
#include "io/event_loop.h"
#include "io/posix_file_system.h"
#include "io/posix_network.h"
#include "io/runtime.h"
#include "io/thread_blocking_executor.h"

namespace samsa {

class PosixRuntime final : public Runtime {
 public:
  static Result<std::unique_ptr<PosixRuntime>> create(uint64_t seed);
  ~PosixRuntime() override;
  PosixRuntime(const PosixRuntime&) = delete;
  PosixRuntime& operator=(const PosixRuntime&) = delete;

  // Runs the loop on the calling thread until stop() (thread-safe).
  void run() { loop_->run(); }
  void stop() { loop_->stop(); }
  EventLoop& loop() { return *loop_; }

  Clock& clock() override { return clock_; }
  int64_t now_ns() const override { return loop_->now_ns(); }
  TimerId add_timer(int64_t delay_ms, Task fn) override { return loop_->add_timer(delay_ms, std::move(fn)); }
  bool cancel_timer(TimerId id) override { return loop_->cancel_timer(id); }
  void post(Task task) override { loop_->post(std::move(task)); }
  bool in_loop_thread() const override { return loop_->in_loop_thread(); }

  Network& network() override { return network_; }
  FileSystem& files() override { return files_; }
  BlockingExecutor& blocking() override;
  uint64_t seed() const override { return seed_; }

 private:
  PosixRuntime(std::unique_ptr<EventLoop> loop, uint64_t seed);

  std::unique_ptr<EventLoop> loop_;
  SystemClock clock_;
  PosixNetwork network_;
  PosixFileSystem files_;
  std::unique_ptr<ThreadBlockingExecutor> blocking_;  // started by blocking()
  uint64_t seed_;
};

// 64 random bits from the OS (getrandom(2); std::random_device if that
// fails): a node's seed, never wall time or the pid.
uint64_t os_random_seed();

}  // namespace samsa

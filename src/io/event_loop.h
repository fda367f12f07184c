#pragma once
// EventLoop: one thread's epoll loop with timers and a thread-safe task queue.
//
// Contract:
// - run() executes on the calling thread (the "loop thread") until stop().
//   Every callback (I/O, timer, posted task) runs on that thread, one at a
//   time, so code driven by one loop needs no locks. Each stop() ends one
//   run() (a stop() before run() makes it return at once); while no run() is
//   in progress, any thread counts as the loop thread (the owner's).
// - post() and stop() may be called from any thread (and from signal-free
//   contexts only: they take a mutex). Everything else is loop-thread only.
// - Timers use the monotonic clock. Delays are in milliseconds, deadlines are
//   kept in nanoseconds: a timer fires once, never before `delay_ms` has fully
//   passed on that clock (a millisecond clock would let a timer added at
//   x.9 ms fire 0.9 ms early); timers with the same deadline fire in the
//   order they were added. cancel_timer() of a fired or unknown id is a no-op.
// - I/O: an IoHandler is registered for one fd and is called with the epoll
//   event mask. Registration is by token, so an event already fetched for a
//   handler that has since been removed is dropped, never delivered to a
//   dangling pointer. The handler must outlive its registration.
// - Level-triggered: a handler that does not drain its fd is called again.

#include <sys/epoll.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "io/unique_fd.h"

namespace samsa {

class IoHandler {
 public:
  virtual ~IoHandler() = default;
  // `events` is the epoll mask (EPOLLIN, EPOLLOUT, EPOLLERR, EPOLLHUP, ...).
  virtual void on_io(uint32_t events) = 0;
};

using TimerId = uint64_t;
using IoToken = uint64_t;

class EventLoop {
 public:
  using Task = std::function<void()>;

  // Creates the epoll and wake-up descriptors; fails only if the OS refuses.
  static Result<std::unique_ptr<EventLoop>> create();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Runs until stop(). Returns at once if stop() was already called.
  void run();
  // Thread-safe. Makes run() return after the callback in progress.
  void stop();
  // A stop() not yet consumed by the run() it ends.
  bool stopped() const { return stop_requested_.load(std::memory_order_acquire); }

  // Thread-safe. Runs `task` on the loop thread, in posting order.
  void post(Task task);

  // Loop thread. `fn` runs once, `delay_ms` (>= 0) from now.
  TimerId add_timer(int64_t delay_ms, Task fn);
  // Returns true if the timer was pending (and now will not fire).
  bool cancel_timer(TimerId id);

  // Monotonic milliseconds (same clock the timers use, truncated).
  int64_t now_ms() const;
  // Monotonic nanoseconds: the timers' own clock.
  int64_t now_ns() const;

  // Loop thread. Watches `fd` for `events` (EPOLLIN/EPOLLOUT...).
  Result<IoToken> add_fd(int fd, uint32_t events, IoHandler* handler);
  Status modify_fd(int fd, IoToken token, uint32_t events);
  // Stops watching; pending events for this token are discarded.
  void remove_fd(int fd, IoToken token);

  bool in_loop_thread() const;
  size_t pending_timers() const { return timers_.size(); }

 private:
  explicit EventLoop(UniqueFd epoll_fd, UniqueFd wake_fd);
  void wake();
  void drain_wake_fd();
  void run_posted();
  void run_due_timers();
  int epoll_timeout_ms() const;

  UniqueFd epoll_fd_;
  UniqueFd wake_fd_;  // eventfd, registered with token 0
  std::atomic<bool> stop_requested_{false};
  std::atomic<std::thread::id> loop_thread_{};

  mutable std::mutex posted_mu_;
  std::vector<Task> posted_;  // guarded by posted_mu_

  IoToken next_token_ = 1;
  std::unordered_map<IoToken, IoHandler*> handlers_;

  struct TimerKey {
    int64_t deadline_ns;
    TimerId id;
    bool operator<(const TimerKey& o) const {
      return deadline_ns != o.deadline_ns ? deadline_ns < o.deadline_ns : id < o.id;
    }
  };
  TimerId next_timer_id_ = 1;
  std::map<TimerKey, Task> timers_;
  std::unordered_map<TimerId, int64_t> timer_deadlines_;  // id -> deadline_ns
};

}  // namespace samsa

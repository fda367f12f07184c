#include "io/event_loop.h"

#include <sys/eventfd.h>
#include <time.h>

#include <cerrno>

#include "base/log.h"

namespace samsa {
namespace {
constexpr IoToken kWakeToken = 0;
constexpr int kMaxEventsPerWait = 256;
// A timer delay above this (about 100 years) is treated as this.
constexpr int64_t kMaxTimerDelayMs = int64_t(100) * 365 * 24 * 3600 * 1000;
}  // namespace

Result<std::unique_ptr<EventLoop>> EventLoop::create() {
  UniqueFd ep(::epoll_create1(EPOLL_CLOEXEC));
  if (!ep.valid()) return errno_error("epoll_create1", errno);
  UniqueFd wake(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!wake.valid()) return errno_error("eventfd", errno);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kWakeToken;
  if (::epoll_ctl(ep.get(), EPOLL_CTL_ADD, wake.get(), &ev) != 0) return errno_error("epoll_ctl(eventfd)", errno);
  return std::unique_ptr<EventLoop>(new EventLoop(std::move(ep), std::move(wake)));
}

EventLoop::EventLoop(UniqueFd epoll_fd, UniqueFd wake_fd)
    : epoll_fd_(std::move(epoll_fd)), wake_fd_(std::move(wake_fd)) {}

EventLoop::~EventLoop() {
  // Destroy pending work first, while every member is still intact: a task's
  // captures (a connection kept alive until a posted task ran) may call back
  // into the loop from their destructors.
  std::vector<Task> posted;
  {
    std::lock_guard lock(posted_mu_);
    posted.swap(posted_);
  }
  posted.clear();
  auto timers = std::move(timers_);
  timers_.clear();
  timer_deadlines_.clear();
  timers.clear();
}

int64_t EventLoop::now_ns() const {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

int64_t EventLoop::now_ms() const { return now_ns() / 1'000'000; }

bool EventLoop::in_loop_thread() const {
  auto id = loop_thread_.load(std::memory_order_acquire);
  return id == std::thread::id() || id == std::this_thread::get_id();
}

void EventLoop::wake() {
  uint64_t one = 1;
  // EAGAIN means the counter is already non-zero: the loop will wake anyway.
  ssize_t n = ::write(wake_fd_.get(), &one, sizeof one);
  (void)n;
}

void EventLoop::drain_wake_fd() {
  uint64_t value;
  while (::read(wake_fd_.get(), &value, sizeof value) > 0) {
  }
}

void EventLoop::stop() {
  stop_requested_.store(true, std::memory_order_release);
  wake();
}

void EventLoop::post(Task task) {
  {
    std::lock_guard lock(posted_mu_);
    posted_.push_back(std::move(task));
  }
  wake();
}

void EventLoop::run_posted() {
  std::vector<Task> batch;
  {
    std::lock_guard lock(posted_mu_);
    batch.swap(posted_);
  }
  // Tasks posted by these tasks run in the next round, after I/O: a task that
  // re-posts itself cannot starve the sockets.
  for (auto& task : batch) {
    if (stopped()) {
      // Keep the rest so that nothing posted is silently lost if run() resumes.
      std::lock_guard lock(posted_mu_);
      for (auto& t : batch) {
        if (t) posted_.push_back(std::move(t));
      }
      return;
    }
    Task t = std::move(task);
    task = nullptr;
    t();
  }
}

TimerId EventLoop::add_timer(int64_t delay_ms, Task fn) {
  ASSERT(in_loop_thread());
  if (delay_ms < 0) delay_ms = 0;
  TimerId id = next_timer_id_++;
  // Bounded so the nanosecond deadline cannot overflow (~292 years).
  if (delay_ms > kMaxTimerDelayMs) delay_ms = kMaxTimerDelayMs;
  int64_t deadline = now_ns() + delay_ms * 1'000'000;
  timers_.emplace(TimerKey{deadline, id}, std::move(fn));
  timer_deadlines_.emplace(id, deadline);
  return id;
}

bool EventLoop::cancel_timer(TimerId id) {
  ASSERT(in_loop_thread());
  auto it = timer_deadlines_.find(id);
  if (it == timer_deadlines_.end()) return false;
  timers_.erase(TimerKey{it->second, id});
  timer_deadlines_.erase(it);
  return true;
}

void EventLoop::run_due_timers() {
  int64_t now = now_ns();
  // Only timers due at entry run now; a timer added by a callback with delay 0
  // runs in the next round, so a timer chain cannot starve I/O.
  TimerId max_id = next_timer_id_;
  while (!timers_.empty() && !stopped()) {
    auto it = timers_.begin();
    if (it->first.deadline_ns > now || it->first.id >= max_id) break;
    Task fn = std::move(it->second);
    timer_deadlines_.erase(it->first.id);
    timers_.erase(it);
    fn();
  }
}

int EventLoop::epoll_timeout_ms() const {
  {
    std::lock_guard lock(posted_mu_);
    if (!posted_.empty()) return 0;
  }
  if (timers_.empty()) return -1;
  int64_t wait_ns = timers_.begin()->first.deadline_ns - now_ns();
  if (wait_ns <= 0) return 0;
  // Rounded up: epoll_wait takes whole milliseconds, and a rounded-down wait
  // would wake before the deadline (run_due_timers re-checks either way).
  int64_t wait_ms = (wait_ns + 999'999) / 1'000'000;
  return wait_ms > 60'000 ? 60'000 : int(wait_ms);
}

void EventLoop::run() {
  loop_thread_.store(std::this_thread::get_id(), std::memory_order_release);
  epoll_event events[kMaxEventsPerWait];
  while (!stopped()) {
    int n = ::epoll_wait(epoll_fd_.get(), events, kMaxEventsPerWait, epoll_timeout_ms());
    if (n < 0) {
      ASSERT_MSG(errno == EINTR, "epoll_wait failed");
      continue;
    }
    for (int i = 0; i < n && !stopped(); ++i) {
      IoToken token = events[i].data.u64;
      if (token == kWakeToken) {
        drain_wake_fd();
        continue;
      }
      // Looked up per event: an earlier callback in this batch may have
      // removed (and destroyed) this handler.
      auto it = handlers_.find(token);
      if (it != handlers_.end()) it->second->on_io(events[i].events);
    }
    run_due_timers();
    run_posted();
  }
  // Each stop() ends one run(): a test may drive one loop in phases. Between
  // runs whoever owns the loop is its thread.
  stop_requested_.store(false, std::memory_order_release);
  loop_thread_.store(std::thread::id(), std::memory_order_release);
}

Result<IoToken> EventLoop::add_fd(int fd, uint32_t events, IoHandler* handler) {
  IoToken token = next_token_++;
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = token;
  if (::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) return errno_error("epoll_ctl(ADD)", errno);
  handlers_.emplace(token, handler);
  return token;
}

Status EventLoop::modify_fd(int fd, IoToken token, uint32_t events) {
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = token;
  if (::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_MOD, fd, &ev) != 0) return errno_error("epoll_ctl(MOD)", errno);
  return ok_status();
}

void EventLoop::remove_fd(int fd, IoToken token) {
  handlers_.erase(token);
  ::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, fd, nullptr);
}

}  // namespace samsa

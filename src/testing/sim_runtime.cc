#include "testing/sim_runtime.h"

#include "base/assert.h"
#include <fmt/format.h>

namespace samsa::sim {

namespace {

uint64_t mix(uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

int64_t SimClock::wall_ms() const { return SimWorld::kWallEpochMs + world_.wall_offset_ms(host_) + world_.now_ms(); }

// ---------------------------------------------------------------- runtime

SimRuntime::SimRuntime(SimWorld& world, HostId host, uint64_t incarnation, SimVolume& volume)
    : world_(world),
      host_(host),
      incarnation_(incarnation),
      seed_(mix(mix(world.seed() ^ mix(uint64_t(host.value()))) ^ incarnation)),
      loop_thread_(std::this_thread::get_id()),
      clock_(world, host),
      network_(world.net(), host, incarnation),
      files_(volume, volume.generation()),
      blocking_(*this) {}

SimRuntime::~SimRuntime() = default;

EventId SimRuntime::schedule(int64_t delay_ns, std::string what, Task fn) {
  if (dead_) return 0;
  return world_.schedule(delay_ns, host_, std::move(what), std::move(fn));
}

TimerId SimRuntime::add_timer(int64_t delay_ms, Task fn) {
  ASSERT(delay_ms >= 0);
  if (dead_) return 0;
  // The id is the event's, known only once scheduled: the task finds it in a shared slot.
  auto self = std::make_shared<TimerId>(0);
  TimerId id = schedule(delay_ms * 1'000'000, fmt::format("timer {}ms", delay_ms), [this, self, fn = std::move(fn)] {
    timers_.erase(*self);
    fn();
  });
  *self = id;
  timers_.insert(id);
  return id;
}

bool SimRuntime::cancel_timer(TimerId id) {
  if (timers_.erase(id) == 0) return false;
  return world_.cancel(id);
}

void SimRuntime::post(Task task) {
  ASSERT_MSG(std::this_thread::get_id() == loop_thread_, "post() from another thread under simulation");
  schedule(0, "post", std::move(task));
}

void SimRuntime::kill() {
  dead_ = true;
  timers_.clear();
}

// ------------------------------------------------------ blocking executor

void SimBlockingExecutor::submit(Work work, Done done) {
  if (runtime_.dead()) return;  // the process is gone: neither runs
  uint64_t number = ++submitted_;
  if (drained_) {
    Status s = work();
    done(std::move(s));
    return;
  }
  queue_.push_back(Item{number, std::move(work), std::move(done)});
  if (queue_.size() == 1) start_next();
}

void SimBlockingExecutor::start_next() {
  if (queue_.empty()) return;
  int64_t latency = runtime_.sim_files().volume().draw_latency_ns();
  run_event_ = runtime_.schedule(latency, fmt::format("blocking run #{}", queue_.front().number), [this] {
    run_event_ = 0;
    run_head();
  });
}

void SimBlockingExecutor::run_head() {
  Item item = std::move(queue_.front());
  queue_.pop_front();
  Status s = item.work();
  outcomes_.push_back(Outcome{item.number, std::move(s), std::move(item.done)});
  if (deliver_event_ == 0) {
    deliver_event_ = runtime_.schedule(0, fmt::format("blocking done #{}", outcomes_.front().number), [this] {
      deliver_event_ = 0;
      deliver_next();
    });
  }
  start_next();
}

void SimBlockingExecutor::deliver_next() {
  Outcome o = std::move(outcomes_.front());
  outcomes_.pop_front();
  if (!outcomes_.empty()) {
    deliver_event_ = runtime_.schedule(0, fmt::format("blocking done #{}", outcomes_.front().number), [this] {
      deliver_event_ = 0;
      deliver_next();
    });
  }
  o.done(std::move(o.status));
}

void SimBlockingExecutor::drain() {
  drained_ = true;
  if (runtime_.dead()) return;
  runtime_.cancel(run_event_);
  runtime_.cancel(deliver_event_);
  run_event_ = deliver_event_ = 0;
  while (!queue_.empty()) {
    Item item = std::move(queue_.front());
    queue_.pop_front();
    Status s = item.work();
    outcomes_.push_back(Outcome{item.number, std::move(s), std::move(item.done)});
  }
  while (!outcomes_.empty()) {
    Outcome o = std::move(outcomes_.front());
    outcomes_.pop_front();
    o.done(std::move(o.status));
  }
}

}  // namespace samsa::sim

#include "io/posix_runtime.h"

#include <sys/random.h>

#include <random>

namespace samsa {

Result<std::unique_ptr<PosixRuntime>> PosixRuntime::create(uint64_t seed) {
  ASSIGN_OR_RETURN(auto loop, EventLoop::create());
  return std::unique_ptr<PosixRuntime>(new PosixRuntime(std::move(loop), seed));
}

PosixRuntime::PosixRuntime(std::unique_ptr<EventLoop> loop, uint64_t seed)
    : loop_(std::move(loop)), network_(*loop_), seed_(seed) {}

PosixRuntime::~PosixRuntime() {
  if (blocking_) blocking_->drain();
}

BlockingExecutor& PosixRuntime::blocking() {
  if (!blocking_) {
    EventLoop* loop = loop_.get();
    blocking_ = std::make_unique<ThreadBlockingExecutor>([loop](std::function<void()> task) {
      loop->post(std::move(task));
    });
  }
  return *blocking_;
}

uint64_t os_random_seed() {
  uint64_t seed = 0;
  if (::getrandom(&seed, sizeof seed, 0) == ssize_t(sizeof seed)) return seed;
  std::random_device device;
  return (uint64_t(device()) << 32) ^ uint64_t(device());
}

}  // namespace samsa

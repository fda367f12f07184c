#include "io/thread_blocking_executor.h"

#include <exception>
#include <string>

namespace samsa {

namespace {
// A throwing work (e.g. bad_alloc) is an outcome, not std::terminate.
Status run_catching(const BlockingExecutor::Work& work) {
  try {
    return work();
  } catch (const std::exception& e) {
    return Error(ErrorKind::kIo, std::string("blocking work: ") + e.what());
  }
}
}  // namespace

void InlineBlockingExecutor::submit(Work work, Done done) { done(run_catching(work)); }

BlockingExecutor& inline_blocking_executor() {
  static InlineBlockingExecutor executor;  // stateless: nothing is shared but the vtable
  return executor;
}

ThreadBlockingExecutor::ThreadBlockingExecutor(Post post) : post_(std::move(post)), worker_([this] { run(); }) {}

ThreadBlockingExecutor::~ThreadBlockingExecutor() { drain(); }

void ThreadBlockingExecutor::drain() {
  if (worker_.joinable()) {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    wake_.notify_one();
    worker_.join();
  }
  outcomes_->deliver();
}

void ThreadBlockingExecutor::Outcomes::deliver() {
  for (;;) {
    std::unique_lock lock(mu);
    if (ready.empty()) return;
    auto [done, outcome] = std::move(ready.front());
    ready.pop_front();
    lock.unlock();
    done(outcome);
  }
}

void ThreadBlockingExecutor::submit(Work work, Done done) {
  {
    std::lock_guard lock(mu_);
    if (!stopping_) {
      queue_.emplace_back(std::move(work), std::move(done));
      wake_.notify_one();
      return;
    }
  }
  // Drained: the thread is gone, so the work runs here, in order after
  // everything drain() delivered.
  done(run_catching(work));
}

void ThreadBlockingExecutor::run() {
  for (;;) {
    std::unique_lock lock(mu_);
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and all the work has run
    auto [work, done] = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    Status outcome = run_catching(work);
    {
      std::lock_guard ready(outcomes_->mu);
      outcomes_->ready.emplace_back(std::move(done), std::move(outcome));
    }
    post_([outcomes = outcomes_] { outcomes->deliver(); });
  }
}

}  // namespace samsa

#include "io/byte_budget.h"

#include <malloc.h>

#include "base/assert.h"

namespace samsa {

std::shared_ptr<ByteBudget> ByteBudget::create(Runtime& runtime, size_t capacity, size_t trim_slack) {
  return std::shared_ptr<ByteBudget>(new ByteBudget(runtime, capacity, trim_slack));
}

ByteBudget::ByteBudget(Runtime& runtime, size_t capacity, size_t trim_slack)
    : runtime_(runtime), capacity_(capacity), trim_slack_(trim_slack) {
  ASSERT(capacity_ > 0);
}

// After the loop stopped, the last frames may be dropped on another thread
// (a test's): the owner's, which the runtime then counts as its loop's.
void ByteBudget::check_thread() const { ASSERT(runtime_.in_loop_thread()); }

bool ByteBudget::try_acquire(size_t n) {
  check_thread();
  if (exhausted()) return false;
  acquire_anyway(n);
  return true;
}

void ByteBudget::acquire_anyway(size_t n) {
  check_thread();
  used_ += n;
  if (used_ > peak_) peak_ = used_;
}

void ByteBudget::release(size_t n) {
  check_thread();
  ASSERT_MSG(n <= used_, "released more bytes than were acquired");
  used_ -= n;
  if (!waiters_.empty() && !exhausted()) schedule_wake();
  maybe_report_freed();
}

bool ByteBudget::take_overdraft(HolderId holder) {
  ASSERT(holder != 0);
  if (overdraft_holder_ != 0 && overdraft_holder_ != holder) return false;
  overdraft_holder_ = holder;
  return true;
}

void ByteBudget::end_overdraft(HolderId holder) {
  if (overdraft_holder_ != holder || holder == 0) return;
  overdraft_holder_ = 0;
  if (!waiters_.empty()) schedule_wake();
}

ByteBudget::WaiterId ByteBudget::wait(std::function<void()> on_available) {
  check_thread();
  WaiterId id = next_waiter_++;
  waiters_.push_back(Waiter{id, std::move(on_available)});
  // Released while the caller was deciding to wait: do not sleep through it.
  // (Not for a free overdraft: a caller that could take it would have; one
  // that cannot would be woken, refused and queued again, round and round.)
  if (!exhausted()) schedule_wake();
  return id;
}

void ByteBudget::cancel(WaiterId id) {
  for (auto it = waiters_.begin(); it != waiters_.end(); ++it) {
    if (it->id == id) {
      waiters_.erase(it);
      return;
    }
  }
}

void ByteBudget::schedule_wake() {
  if (wake_posted_) return;
  wake_posted_ = true;
  runtime_.post([weak = weak_from_this()] {
    if (auto self = weak.lock()) self->run_wake();
  });
}

// Wakes waiters in order while progress is possible. Those that wait again
// queue behind the ones not woken this round.
void ByteBudget::run_wake() {
  wake_posted_ = false;
  std::deque<Waiter> batch;
  batch.swap(waiters_);
  while (!batch.empty() && can_progress()) {
    Waiter w = std::move(batch.front());
    batch.pop_front();
    w.fn();
  }
  waiters_.insert(waiters_.begin(), std::make_move_iterator(batch.begin()), std::make_move_iterator(batch.end()));
}

void ByteBudget::maybe_report_freed() {
  if (!on_freed_ || freed_posted_) return;
  if (peak_ - used_ < trim_slack_ || used_ > peak_ / 4) return;
  freed_posted_ = true;
  runtime_.post([weak = weak_from_this()] {
    auto self = weak.lock();
    if (!self) return;
    self->freed_posted_ = false;
    self->peak_ = self->used_;
    self->on_freed_();
  });
}

std::shared_ptr<Bytes> ByteBudget::lease(std::shared_ptr<Bytes> buffer, size_t charged) {
  Bytes* raw = buffer.get();
  // The deleter drops its copy of the buffer when called (not when the
  // control block goes), so a reuse check on use_count() sees it at once.
  return std::shared_ptr<Bytes>(raw, [buffer = std::move(buffer), self = shared_from_this(),
                                      charged](Bytes*) mutable {
    buffer.reset();
    self->release(charged);
  });
}

void return_free_heap_to_os() { ::malloc_trim(0); }

}  // namespace samsa

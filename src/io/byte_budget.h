#pragma once
// ByteBudget: bytes held against a cap, shared by every connection of a
// runtime (one loop): queued.max.request.bytes counts requests being read or
// handled, queued.max.response.bytes counts unsent responses in memory.
//
// Contract:
// - try_acquire(n) succeeds while anything is left (used < capacity), even
//   when n overshoots: Kafka's SimpleMemoryPool does the same, so a request
//   larger than the whole budget still gets through, and `used` exceeds the
//   capacity by at most one acquisition (plus the overdraft below).
// - acquire_anyway(n) always succeeds: for bytes that exist already (a
//   response built by a handler); the cap then only decides who is muted.
// - A caller refused calls wait(): its callback runs once, FIFO, from a task
//   posted to the loop (never inside release(), which runs wherever the last
//   reference to a request frame is dropped, deep inside a handler), when
//   bytes were released and the budget is not exhausted, or the overdraft
//   was given up. The callback retries (and may wait again).
// - Overdraft (progress guarantee): one holder at a time may acquire beyond
//   the cap to finish the request it is in the middle of reading. Without it,
//   connections each holding part of a request could fill the budget, none
//   could finish, and nothing would ever be released.
// - Giving memory back: when `used` has fallen far below its peak (by at
//   least trim_slack bytes, to under a quarter of the peak), the on_freed hook
//   runs from a posted task (the server returns free heap pages to the OS
//   there). Steady load, whose `used` stays near its peak, never triggers it.
// - lease(buffer, n): a pointer to `buffer` whose destruction (the last copy
//   dropped) releases n bytes: how a request frame carries its charge into
//   the handler and back.
// Loop-thread only (asserted). Owned by a shared_ptr: leases and posted tasks
// keep it alive or check it.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>

#include "base/bytes.h"
#include "io/runtime.h"

namespace samsa {

class ByteBudget : public std::enable_shared_from_this<ByteBudget> {
 public:
  static constexpr size_t kUnbounded = std::numeric_limits<size_t>::max();
  static constexpr size_t kDefaultTrimSlack = size_t(16) << 20;  // = M_TRIM_THRESHOLD (samsa_main.cc)
  using WaiterId = uint64_t;
  using HolderId = uint64_t;  // a connection id; never 0

  static std::shared_ptr<ByteBudget> create(Runtime& runtime, size_t capacity = kUnbounded,
                                            size_t trim_slack = kDefaultTrimSlack);

  size_t capacity() const { return capacity_; }
  size_t used() const { return used_; }
  bool exhausted() const { return used_ >= capacity_; }

  bool try_acquire(size_t n);
  void acquire_anyway(size_t n);
  void release(size_t n);

  // The overdraft: true if `holder` holds it now (it was free or already
  // its own). end_overdraft() by a holder that does not hold it is a no-op.
  bool take_overdraft(HolderId holder);
  void end_overdraft(HolderId holder);
  HolderId overdraft_holder() const { return overdraft_holder_; }

  WaiterId wait(std::function<void()> on_available);
  void cancel(WaiterId id);
  size_t waiters() const { return waiters_.size(); }

  void set_on_freed(std::function<void()> hook) { on_freed_ = std::move(hook); }

  std::shared_ptr<Bytes> lease(std::shared_ptr<Bytes> buffer, size_t charged);

 private:
  struct Waiter {
    WaiterId id;
    std::function<void()> fn;
  };
  ByteBudget(Runtime& runtime, size_t capacity, size_t trim_slack);
  bool can_progress() const { return !exhausted() || overdraft_holder_ == 0; }
  void schedule_wake();
  void run_wake();
  void maybe_report_freed();
  void check_thread() const;

  Runtime& runtime_;
  size_t capacity_;
  size_t trim_slack_;
  size_t used_ = 0;
  size_t peak_ = 0;  // highest `used` since on_freed last ran
  HolderId overdraft_holder_ = 0;
  std::deque<Waiter> waiters_;
  WaiterId next_waiter_ = 1;
  bool wake_posted_ = false;
  bool freed_posted_ = false;
  std::function<void()> on_freed_;
};

// Returns free heap pages to the OS (malloc_trim): what a ByteBudget's
// on_freed hook does in the server.
void return_free_heap_to_os();

}  // namespace samsa

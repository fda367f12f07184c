#pragma once
// FetchWaiters: the delayed-fetch purgatory. A fetch that found fewer than
// min.bytes waits here until new data arrives on one of its partitions or
// max.wait.ms passes, whichever is first. Appends call notify(tp); the
// waiter's try_complete() re-reads and answers if it now has enough.
//
// Limits: one waiter per in-flight fetch request, itself bounded by the
// connection's in-flight request limit. Loop-thread only.

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <vector>

#include "io/runtime.h"
#include "model/ids.h"

namespace samsa {

class FetchWaiters {
 public:
  // Returns true if the fetch was answered (the waiter is then dropped).
  using TryComplete = std::function<bool()>;
  // Answers with whatever there is (max wait reached).
  using Expire = std::function<void()>;

  void attach(Runtime& runtime) { runtime_ = &runtime; }
  void park(const std::vector<TopicPartition>& partitions, int64_t max_wait_ms, TryComplete try_complete,
            Expire expire);
  void notify(const TopicPartition& tp);
  // Answers every waiter now (shutdown).
  void expire_all();
  size_t size() const { return waiters_.size(); }

 private:
  struct Waiter {
    std::vector<TopicPartition> partitions;
    TimerId timer = 0;
    TryComplete try_complete;
    Expire expire;
  };
  void remove(uint64_t id);

  Runtime* runtime_ = nullptr;
  uint64_t next_id_ = 1;
  std::map<uint64_t, Waiter> waiters_;
  std::map<TopicPartition, std::set<uint64_t>> by_partition_;
};

}  // namespace samsa

#include "broker/fetch_waiters.h"

#include "base/assert.h"

namespace samsa {

void FetchWaiters::park(const std::vector<TopicPartition>& partitions, int64_t max_wait_ms, TryComplete try_complete,
                        Expire expire) {
  ASSERT(runtime_ != nullptr);
  uint64_t id = next_id_++;
  Waiter& w = waiters_[id];
  w.partitions = partitions;
  w.try_complete = std::move(try_complete);
  w.expire = std::move(expire);
  for (const auto& tp : partitions) by_partition_[tp].insert(id);
  w.timer = runtime_->add_timer(max_wait_ms, [this, id] {
    auto it = waiters_.find(id);
    if (it == waiters_.end()) return;
    Expire expire = std::move(it->second.expire);
    it->second.timer = 0;
    remove(id);
    expire();
  });
}

void FetchWaiters::notify(const TopicPartition& tp) {
  auto it = by_partition_.find(tp);
  if (it == by_partition_.end()) return;
  std::vector<uint64_t> ids(it->second.begin(), it->second.end());
  for (uint64_t id : ids) {
    auto w = waiters_.find(id);
    if (w == waiters_.end()) continue;
    if (w->second.try_complete()) remove(id);
  }
}

void FetchWaiters::expire_all() {
  while (!waiters_.empty()) {
    uint64_t id = waiters_.begin()->first;
    Expire expire = std::move(waiters_.begin()->second.expire);
    remove(id);
    expire();
  }
}

void FetchWaiters::remove(uint64_t id) {
  auto it = waiters_.find(id);
  if (it == waiters_.end()) return;
  if (it->second.timer != 0) runtime_->cancel_timer(it->second.timer);
  for (const auto& tp : it->second.partitions) {
    auto p = by_partition_.find(tp);
    if (p == by_partition_.end()) continue;
    p->second.erase(id);
    if (p->second.empty()) by_partition_.erase(p);
  }
  waiters_.erase(it);
}

}  // namespace samsa

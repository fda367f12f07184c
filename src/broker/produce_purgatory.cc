#include "broker/produce_purgatory.h"

#include <algorithm>

#include "base/assert.h"
#include "replication/partition.h"

namespace samsa {

protocol::ErrorCode produce_wait_error(std::optional<replication::ProduceError> outcome) {
  using protocol::ErrorCode;
  if (!outcome) return ErrorCode::kRequestTimedOut;  // DelayedProduce.onExpiration
  switch (*outcome) {
    case replication::ProduceError::kNone: return ErrorCode::kNone;
    case replication::ProduceError::kNotLeaderOrFollower: return ErrorCode::kNotLeaderOrFollower;
    case replication::ProduceError::kNotEnoughReplicas: return ErrorCode::kNotEnoughReplicas;
    case replication::ProduceError::kNotEnoughReplicasAfterAppend: return ErrorCode::kNotEnoughReplicasAfterAppend;
  }
  return ErrorCode::kUnknownServerError;
}

ProducePurgatory::~ProducePurgatory() {
  if (!runtime_) return;
  for (auto& [id, e] : entries_) {
    if (e.timer) runtime_->cancel_timer(e.timer);
  }
}

void ProducePurgatory::park(std::vector<ProduceWait> waits, int64_t timeout_ms, Done done) {
  ASSERT_MSG(!waits.empty(), "a parked produce waits for at least one partition");
  const uint64_t id = next_id_++;
  Entry& e = entries_[id];
  e.waits = std::move(waits);
  e.ids.assign(e.waits.size(), 0);
  e.outcomes.assign(e.waits.size(), std::nullopt);
  e.decided.assign(e.waits.size(), false);
  e.open = e.waits.size();
  e.done = std::move(done);
  const size_t n = e.waits.size();
  for (size_t i = 0; i < n; ++i) {
    auto it = entries_.find(id);
    if (it == entries_.end()) return;  // the last wait was decided
    Entry& entry = it->second;
    Partition* p = lookup_(entry.waits[i].tp);
    if (!p) {
      decide(id, i, replication::ProduceError::kNotLeaderOrFollower);
      continue;
    }
    entry.ids[i] = next_wait_id_++;
    std::optional<replication::ProduceError> now =
        p->await_produce(entry.ids[i], entry.waits[i].required_offset,
                         [this, id, i](replication::ProduceError error) { decide(id, i, error); });
    if (now) decide(id, i, *now);
  }
  auto it = entries_.find(id);
  if (it == entries_.end()) return;  // all decided already
  ASSERT_MSG(runtime_ != nullptr, "the produce purgatory needs a runtime to time out");
  it->second.timer = runtime_->add_timer(std::max<int64_t>(timeout_ms, 0), [this, id] { expire(id); });
}

void ProducePurgatory::decide(uint64_t entry, size_t index, std::optional<replication::ProduceError> outcome) {
  auto it = entries_.find(entry);
  if (it == entries_.end()) return;
  Entry& e = it->second;
  if (e.decided[index]) return;
  e.decided[index] = true;
  e.outcomes[index] = outcome;
  if (--e.open > 0) return;
  if (e.timer && runtime_) runtime_->cancel_timer(e.timer);
  Done done = std::move(e.done);
  Outcomes outcomes = std::move(e.outcomes);
  entries_.erase(it);
  done(std::move(outcomes));
}

// DelayedProduce.onExpiration: what still waits times out.
void ProducePurgatory::expire(uint64_t entry) {
  auto it = entries_.find(entry);
  if (it == entries_.end()) return;
  it->second.timer = 0;
  const size_t n = it->second.waits.size();
  for (size_t i = 0; i < n; ++i) {
    it = entries_.find(entry);
    if (it == entries_.end()) return;
    Entry& e = it->second;
    if (e.decided[i]) continue;
    if (Partition* p = lookup_(e.waits[i].tp)) p->cancel_produce(e.ids[i]);
    decide(entry, i, std::nullopt);
  }
}

}  // namespace samsa

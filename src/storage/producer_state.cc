#include "storage/producer_state.h"

#include <climits>

namespace samsa {
namespace {

// Kafka's ProducerStateEntry.inSequence: the next sequence, wrapping.
bool in_sequence(int32_t last_seq, int32_t next_seq) {
  return next_seq == (last_seq == INT32_MAX ? 0 : last_seq + 1);
}

}  // namespace

const ProducerEntry* ProducerStateTable::find(ProducerId id) const {
  auto it = producers_.find(id);
  return it == producers_.end() ? nullptr : &it->second;
}

ProducerVerdict ProducerStateTable::check(ProducerId id, ProducerEpoch epoch, int32_t first_seq,
                                          int32_t last_seq) const {
  const ProducerEntry* entry = find(id);
  if (!entry) return {};  // KIP-360: no state, any sequence
  if (epoch < entry->epoch) return {.fault = ProducerFault::kInvalidProducerEpoch};
  if (epoch != entry->epoch) {
    // A bumped epoch restarts the sequence.
    if (first_seq != 0) return {.fault = ProducerFault::kOutOfOrderSequence};
    return {};
  }
  for (const BatchMetadata& b : entry->batches) {
    if (b.first_seq == first_seq && b.last_seq == last_seq) return {.duplicate = b};
  }
  // An entry without batches (its records truncated away) takes any sequence, as
  // Kafka's does once the producer's records are gone.
  if (!entry->batches.empty() && !in_sequence(entry->last_seq(), first_seq)) {
    return {.fault = ProducerFault::kOutOfOrderSequence};
  }
  return {};
}

void ProducerStateTable::apply(const ProducerBatch& batch) {
  ProducerEntry& entry = producers_[batch.producer_id];
  if (batch.epoch != entry.epoch) {
    entry.epoch = batch.epoch;
    entry.batches.clear();
  }
  entry.batches.push_back({batch.first_seq, batch.last_seq, batch.first_offset, batch.last_offset});
  while (entry.batches.size() > kMaxBatches) entry.batches.pop_front();
  if (batch.max_timestamp > entry.last_timestamp) entry.last_timestamp = batch.max_timestamp;
}

void ProducerStateTable::remove_before(Offset offset) {
  for (auto it = producers_.begin(); it != producers_.end();) {
    auto& batches = it->second.batches;
    const bool had_batches = !batches.empty();
    while (!batches.empty() && batches.front().last_offset < offset) batches.pop_front();
    it = had_batches && batches.empty() ? producers_.erase(it) : std::next(it);
  }
}

size_t ProducerStateTable::remove_expired(int64_t now_ms, int64_t expiration_ms) {
  size_t removed = 0;
  for (auto it = producers_.begin(); it != producers_.end();) {
    if (now_ms - it->second.last_timestamp >= expiration_ms) {
      it = producers_.erase(it);
      ++removed;
    } else {
      ++it;
    }
  }
  return removed;
}

}  // namespace samsa

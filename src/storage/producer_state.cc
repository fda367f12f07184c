#include "storage/producer_state.h"

#include <climits>

#include "base/assert.h"

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
  if (batch.transactional && !entry.current_txn_first_offset) entry.current_txn_first_offset = batch.first_offset;
}

std::optional<ProducerFault> ProducerStateTable::check_marker(ProducerId id, ProducerEpoch epoch,
                                                              int32_t coordinator_epoch,
                                                              bool require_higher_epoch) const {
  const ProducerEntry* entry = find(id);
  if (!entry) return std::nullopt;
  if (epoch < entry->epoch || (require_higher_epoch && epoch == entry->epoch)) {
    return ProducerFault::kInvalidProducerEpoch;
  }
  if (coordinator_epoch < entry->coordinator_epoch) return ProducerFault::kCoordinatorFenced;
  return std::nullopt;
}

std::optional<CompletedTxn> ProducerStateTable::apply_marker(const ProducerMarker& marker) {
  ProducerEntry& entry = producers_[marker.producer_id];
  if (marker.epoch != entry.epoch) {  // a bumped epoch restarts the sequence (KIP-890 V2 markers bump it)
    entry.epoch = marker.epoch;
    entry.batches.clear();
  }
  entry.coordinator_epoch = marker.coordinator_epoch;
  if (marker.timestamp > entry.last_timestamp) entry.last_timestamp = marker.timestamp;
  if (!entry.current_txn_first_offset) return std::nullopt;
  CompletedTxn done{marker.producer_id, *entry.current_txn_first_offset, marker.offset, !marker.commit};
  entry.current_txn_first_offset.reset();
  ASSERT(done.first_offset < done.last_offset);
  return done;
}

std::optional<Offset> ProducerStateTable::first_open_txn_offset() const {
  std::optional<Offset> first;
  for (const auto& [id, entry] : producers_) {
    if (entry.current_txn_first_offset && (!first || *entry.current_txn_first_offset < *first)) {
      first = entry.current_txn_first_offset;
    }
  }
  return first;
}

void ProducerStateTable::remove_before(Offset offset) {
  for (auto it = producers_.begin(); it != producers_.end();) {
    auto& batches = it->second.batches;
    const bool had_batches = !batches.empty();
    while (!batches.empty() && batches.front().last_offset < offset) batches.pop_front();
    const bool forgotten = had_batches && batches.empty() && !it->second.current_txn_first_offset;
    it = forgotten ? producers_.erase(it) : std::next(it);
  }
}

size_t ProducerStateTable::remove_expired(int64_t now_ms, int64_t expiration_ms) {
  size_t removed = 0;
  for (auto it = producers_.begin(); it != producers_.end();) {
    if (now_ms - it->second.last_timestamp >= expiration_ms && !it->second.current_txn_first_offset) {
      it = producers_.erase(it);
      ++removed;
    } else {
      ++it;
    }
  }
  return removed;
}

}  // namespace samsa

#pragma once
// ProducerStateTable: one partition's producer state (Kafka's
// ProducerStateManager): per producer id its epoch, the metadata of its
// last kMaxBatches batches (first and last sequence, first and last
// offset), the newest record timestamp for producer.id.expiration.ms, and
// for transactions the first offset of its open transaction on this
// partition and the coordinator epoch of its last marker. Pure: no files,
// no clock.
//
// Transactions (KIP-98): a transactional batch opens the producer's
// transaction here if none is open (its first offset is where the last
// stable offset stops); a marker (model/control_record.h) closes it. A
// marker is checked first (check_marker): an epoch below the producer's is
// INVALID_PRODUCER_EPOCH, as is an equal one when the caller asks for a
// strictly higher epoch (KIP-890 transactions V2 / KIP-1228: the
// coordinator bumps the epoch for every commit or abort); a coordinator
// epoch below the producer's last one is TRANSACTION_COORDINATOR_FENCED.
//
// The leader checks a batch before it appends (check(), Kafka's
// ProducerAppendInfo.checkProducerEpoch / checkSequence /
// UnifiedLog.findDuplicateBatch, Kafka 3.9):
//   - an older epoch than the producer's: INVALID_PRODUCER_EPOCH (Kafka
//     answers it instead of PRODUCER_FENCED since 2.7, KIP-588);
//   - the same epoch, first and last sequence as one of the last five
//     batches: a duplicate, answered NONE with that batch's offsets;
//   - a newer epoch: the sequence must restart at 0, else
//     OUT_OF_ORDER_SEQUENCE_NUMBER;
//   - the same epoch: the sequence must follow the last one (wrapping at
//     INT32_MAX), else OUT_OF_ORDER_SEQUENCE_NUMBER;
//   - a producer id without state (new, expired, or its records deleted):
//     any sequence is accepted (KIP-360, Kafka 2.5+: the broker no longer
//     answers UNKNOWN_PRODUCER_ID; the client's epoch bump resets it).
// Every appended batch is then applied (apply()): by the leader after its
// check, by followers for fetched batches and by recovery for the log's
// batches, unchecked, so every replica holds the same state and a new leader
// deduplicates retries of what the old one appended.

#include <cstdint>
#include <deque>
#include <map>
#include <optional>

#include "model/ids.h"

namespace samsa {

enum class ProducerFault {
  kInvalidProducerEpoch,    // INVALID_PRODUCER_EPOCH (47)
  kOutOfOrderSequence,      // OUT_OF_ORDER_SEQUENCE_NUMBER (45)
  kCoordinatorFenced,       // TRANSACTION_COORDINATOR_FENCED (52), markers only
};

// One producer batch as the log holds it.
struct ProducerBatch {
  ProducerId producer_id{-1};
  ProducerEpoch epoch{-1};
  int32_t first_seq = -1;
  int32_t last_seq = -1;
  Offset first_offset{0};
  Offset last_offset{0};
  int64_t max_timestamp = -1;
  bool transactional = false;
};

// A transaction marker as the log holds it.
struct ProducerMarker {
  ProducerId producer_id{-1};
  ProducerEpoch epoch{-1};
  bool commit = false;
  int32_t coordinator_epoch = -1;
  Offset offset{0};
  int64_t timestamp = -1;
};

// A transaction a marker ended on this partition: its records are
// [first_offset, last_offset] (last_offset is the marker's offset).
struct CompletedTxn {
  ProducerId producer_id{-1};
  Offset first_offset{0};
  Offset last_offset{0};
  bool aborted = false;
  bool operator==(const CompletedTxn&) const = default;
};

struct BatchMetadata {
  int32_t first_seq = -1;
  int32_t last_seq = -1;
  Offset first_offset{0};
  Offset last_offset{0};
  bool operator==(const BatchMetadata&) const = default;
};

struct ProducerEntry {
  ProducerEpoch epoch{-1};
  std::deque<BatchMetadata> batches;  // oldest first, at most kMaxBatches
  int64_t last_timestamp = -1;        // newest max timestamp applied
  int32_t coordinator_epoch = -1;     // of the last marker; -1: none
  std::optional<Offset> current_txn_first_offset;  // the open transaction's first offset
  int32_t last_seq() const { return batches.empty() ? -1 : batches.back().last_seq; }
};

// What check() decided: append (neither set), a duplicate, or a fault.
struct ProducerVerdict {
  std::optional<ProducerFault> fault;
  std::optional<BatchMetadata> duplicate;
};

class ProducerStateTable {
 public:
  // Kafka's ProducerStateEntry.NUM_BATCHES_TO_RETAIN (and librdkafka's and
  // the Java client's max.in.flight limit for idempotence).
  static constexpr size_t kMaxBatches = 5;

  ProducerVerdict check(ProducerId id, ProducerEpoch epoch, int32_t first_seq, int32_t last_seq) const;
  // Records an appended batch (a newer epoch drops the older one's batches).
  void apply(const ProducerBatch& batch);
  // Whether a marker with these fields may be appended (see the top).
  std::optional<ProducerFault> check_marker(ProducerId id, ProducerEpoch epoch, int32_t coordinator_epoch,
                                            bool require_higher_epoch) const;
  // Records an appended marker: the producer takes its epoch and
  // coordinator epoch; its open transaction, if any, is closed and returned.
  std::optional<CompletedTxn> apply_marker(const ProducerMarker& marker);
  // The first offset of the earliest open transaction (nullopt: none open).
  std::optional<Offset> first_open_txn_offset() const;
  // The log start moved to `offset`: batches wholly below it are forgotten,
  // and a producer left without batches with them (what a replay from the
  // log start would hold).
  void remove_before(Offset offset);
  // Producers whose newest timestamp is older than now_ms - expiration_ms
  // (Kafka's removeExpiredProducers), except those with an open
  // transaction (the coordinator ends it first). Returns how many went.
  size_t remove_expired(int64_t now_ms, int64_t expiration_ms);
  // Replaces the whole state (a loaded snapshot).
  void restore(std::map<ProducerId, ProducerEntry> producers) { producers_ = std::move(producers); }
  void clear() { producers_.clear(); }

  const std::map<ProducerId, ProducerEntry>& producers() const { return producers_; }
  const ProducerEntry* find(ProducerId id) const;

 private:
  std::map<ProducerId, ProducerEntry> producers_;
};

}  // namespace samsa

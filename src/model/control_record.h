#pragma once
// Transaction markers: the control batches that end a transaction on a
// partition (Kafka's EndTransactionMarker, ControlRecordType). A control
// batch has attributes control|transactional, the producer's id and epoch,
// base sequence -1, and one record (docs/formats/control-records.md):
//
//   key   = version int16 (0) | type int16 (0 = ABORT, 1 = COMMIT)
//   value = version int16 (0) | coordinator_epoch int32
//
// Only brokers write them (WriteTxnMarkers); a client's control batch is
// refused by validate_records.

#include <cstdint>
#include <optional>

#include "base/bytes.h"
#include "base/result.h"
#include "model/ids.h"

namespace samsa {

enum class ControlType : int16_t { kAbort = 0, kCommit = 1 };

struct TxnMarker {
  ControlType type = ControlType::kAbort;
  int32_t coordinator_epoch = -1;
  bool operator==(const TxnMarker&) const = default;
};

inline constexpr int16_t kControlRecordKeyVersion = 0;
inline constexpr int16_t kTxnMarkerValueVersion = 0;
// What a reader needs of a control batch to read its marker: the header and
// the one small record (a marker batch is 61 + 18 bytes).
inline constexpr size_t kTxnMarkerPeekBytes = 128;

// One uncompressed control batch holding `marker` (base offset 0: the
// broker's append assigns it).
Result<Bytes> build_txn_marker_batch(ProducerId producer, ProducerEpoch epoch, TxnMarker marker, int64_t timestamp_ms);

// The marker of a control batch whose first bytes (at least its header,
// up to the whole batch) are `batch`; nullopt for any other batch and for a
// control record of another type (Kafka skips types it does not know), or
// bytes too short to tell.
std::optional<TxnMarker> parse_txn_marker(ByteView batch);

}  // namespace samsa

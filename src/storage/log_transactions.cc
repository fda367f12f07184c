// The Log's side of transactions (KIP-98): markers appended by the leader
// (append_marker), the aborts they record in the `.txnindex` of their
// segment, the last stable offset, and the aborted transactions a
// read_committed fetch is answered with.
#include <algorithm>

#include "base/log.h"
#include "model/record_batch_header.h"
#include "storage/log.h"

namespace samsa {

Result<AppendResult> Log::append_marker(ProducerId producer, ProducerEpoch producer_epoch, TxnMarker marker,
                                        LeaderEpoch epoch, bool require_higher_epoch) {
  if (std::optional<ProducerFault> fault =
          producers_.check_marker(producer, producer_epoch, marker.coordinator_epoch, require_higher_epoch)) {
    return AppendResult{Offset(-1), Offset(-1), std::nullopt, log_start_, false, fault};
  }
  ASSIGN_OR_RETURN(Bytes batch, build_txn_marker_batch(producer, producer_epoch, marker, clock_.wall_ms()));
  return append(batch.data(), batch.size(), epoch);
}

// `seg` holds the marker (the active segment on append, the replayed one
// at recovery).
Status Log::apply_marker(const ProducerMarker& marker, Segment& seg) {
  std::optional<CompletedTxn> done = producers_.apply_marker(marker);
  if (!done) return ok_status();
  unreplicated_txns_.push_back(*done);
  if (!done->aborted) return ok_status();
  // Kafka's ProducerStateManager.lastStableOffset(completedTxn): where the
  // next open transaction starts, else just past this marker.
  std::optional<Offset> next_open = producers_.first_open_txn_offset();
  AbortedTxn aborted{done->producer_id, done->first_offset, done->last_offset,
                     next_open ? std::min(*next_open, done->last_offset + 1) : done->last_offset + 1};
  return seg.append_aborted_txn(aborted);
}

Offset Log::last_stable_offset(Offset high_watermark) const {
  // A transaction ended by a marker the HW has not passed yet is still
  // undecided (Kafka's unreplicatedTxns): a new leader without the marker
  // would hold it open.
  std::erase_if(unreplicated_txns_, [&](const CompletedTxn& t) { return t.last_offset < high_watermark; });
  Offset lso = high_watermark;
  if (std::optional<Offset> open = producers_.first_open_txn_offset()) lso = std::min(lso, *open);
  for (const CompletedTxn& t : unreplicated_txns_) lso = std::min(lso, t.first_offset);
  ASSERT(lso <= high_watermark);
  return lso;
}

std::vector<AbortedTxn> Log::aborted_txns(Offset from, Offset upper_bound) const {
  std::vector<AbortedTxn> out;
  auto it = segments_.upper_bound(from);
  if (it != segments_.begin()) --it;
  for (; it != segments_.end(); ++it) {
    for (const AbortedTxn& t : it->second->txn_index().entries()) {
      if (t.last_offset >= from && t.first_offset < upper_bound) out.push_back(t);
      if (t.last_stable_offset >= upper_bound) return out;  // nothing later can start below the bound
    }
  }
  return out;
}

}  // namespace samsa

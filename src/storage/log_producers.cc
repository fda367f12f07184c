// The Log's idempotent-producer state: checked before a leader's append,
// applied after every append, replayed from the segments after the latest
// snapshot (log_snapshots.cc) at open and after truncation.
#include <algorithm>
#include <climits>
#include <vector>

#include "base/log.h"
#include "model/control_record.h"
#include "model/record_batch_header.h"
#include "storage/log.h"

namespace samsa {
namespace {

// The producer fields of a batch (header only); nullopt for a batch without
// a producer id, and for control batches (producer_marker's).
std::optional<ProducerBatch> producer_batch(const uint8_t* header) {
  RecordBatchHeader h(header);
  if (h.producer_id().value() < 0 || h.is_control() || h.base_sequence() < 0) return std::nullopt;
  int32_t delta = h.last_offset_delta();
  int64_t last_seq = int64_t(h.base_sequence()) + delta;
  if (last_seq > INT32_MAX) last_seq -= int64_t(INT32_MAX) + 1;  // wraps as the client's does
  return ProducerBatch{h.producer_id(), h.producer_epoch(), h.base_sequence(), int32_t(last_seq),
                       h.base_offset(),  h.last_offset(),    h.max_timestamp(), h.is_transactional()};
}

// The transaction marker of a control batch whose first bytes are `batch`
// (at least its header); nullopt for any other batch.
std::optional<ProducerMarker> producer_marker(ByteView batch) {
  RecordBatchHeader h(batch.data());
  if (!h.is_control() || h.producer_id().value() < 0) return std::nullopt;
  std::optional<TxnMarker> marker = parse_txn_marker(batch);
  if (!marker) return std::nullopt;
  return ProducerMarker{h.producer_id(), h.producer_epoch(), marker->type == ControlType::kCommit,
                        marker->coordinator_epoch, h.base_offset(), h.max_timestamp()};
}

}  // namespace

// The request's batches are whole and framed (append checked them). A
// second batch of the same producer in one request must follow the first.
std::optional<AppendResult> Log::check_producers(const uint8_t* batches, size_t size) const {
  struct Seen {
    ProducerId id;
    ProducerEpoch epoch;
    int32_t last_seq;
  };
  std::vector<Seen> seen;
  for (size_t at = 0; at < size;) {
    const uint8_t* header = batches + at;
    at += size_t(RecordBatchHeader(header).total_size());
    std::optional<ProducerBatch> b = producer_batch(header);
    if (!b) continue;
    AppendResult refused{Offset(-1), Offset(-1), std::nullopt, log_start_};
    auto earlier = std::find_if(seen.begin(), seen.end(), [&](const Seen& s) { return s.id == b->producer_id; });
    if (earlier != seen.end()) {
      if (earlier->epoch != b->epoch || b->first_seq != earlier->last_seq + 1) {
        refused.producer_fault = ProducerFault::kOutOfOrderSequence;
        return refused;
      }
      earlier->last_seq = b->last_seq;
      continue;
    }
    ProducerVerdict verdict = producers_.check(b->producer_id, b->epoch, b->first_seq, b->last_seq);
    if (verdict.fault) {
      refused.producer_fault = verdict.fault;
      return refused;
    }
    if (verdict.duplicate) {  // Kafka: the whole request answers as the duplicate
      return AppendResult{verdict.duplicate->first_offset, verdict.duplicate->last_offset, std::nullopt, log_start_,
                          true, std::nullopt};
    }
    seen.push_back({b->producer_id, b->epoch, b->last_seq});
  }
  return std::nullopt;
}

// The batches were just appended to the active segment.
Status Log::apply_producers(ByteView batches) {
  for (size_t at = 0; at + batch_layout::kHeaderSize <= batches.size();) {
    RecordBatchHeader h(batches.data() + at);
    const size_t size = size_t(h.total_size());
    if (std::optional<ProducerBatch> b = producer_batch(batches.data() + at)) producers_.apply(*b);
    if (std::optional<ProducerMarker> m = producer_marker(batches.subspan(at, size))) {
      RETURN_IF_ERROR(apply_marker(*m, active()));
    }
    at += size;
  }
  return ok_status();
}

// The producer batches from `from` (a snapshot's offset, or the log start)
// to the log end, applied in order: headers only, from the batch holding
// `from` on (the offset index finds it in the first segment).
Status Log::replay_producers_from(Offset from) {
  from = std::max(from, log_start_);
  // The aborts from `from` on are re-derived by the replay.
  unreplicated_txns_.clear();
  for (auto& [base, seg] : segments_) RETURN_IF_ERROR(seg->truncate_txn_index(from));
  uint8_t header[kTxnMarkerPeekBytes];
  int64_t batches = 0;
  auto it = segments_.upper_bound(from);
  if (it != segments_.begin()) --it;
  for (; it != segments_.end(); ++it) {
    Segment& seg = *it->second;
    if (!seg.log_file()) continue;
    int64_t start = 0;
    if (it->first < from) {
      ASSIGN_OR_RETURN(std::optional<ScannedBatch> first, seg.translate_offset(from));
      if (!first) continue;
      start = first->position;
    }
    const File& file = *seg.log_file();
    BatchScanner scanner(file, start, seg.size());
    for (;;) {
      ASSIGN_OR_RETURN(std::optional<ScannedBatch> next, scanner.next(false));
      if (!next) break;
      if (next->frame.last_offset < from) continue;
      ASSIGN_OR_RETURN(size_t n, file.read_at(header, std::min<size_t>(sizeof header, size_t(next->frame.size)),
                                              next->position));
      if (n < batch_layout::kHeaderSize) break;
      ++batches;
      if (std::optional<ProducerBatch> b = producer_batch(header)) producers_.apply(*b);
      if (std::optional<ProducerMarker> m = producer_marker(ByteView(header, n))) RETURN_IF_ERROR(apply_marker(*m, seg));
    }
    load_stats_.producer_state_bytes_read += scanner.bytes_read();
  }
  load_stats_.producer_state_batches_read += batches;
  if (!producers_.producers().empty()) {
    LOG_INFO("storage", "{}: producer state: {} producers, from snapshot {} and {} batches after it",
             tp_.to_string(), producers_.producers().size(), load_stats_.producer_snapshot_offset, batches);
  }
  return ok_status();
}

}  // namespace samsa

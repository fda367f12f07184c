// The Log's idempotent-producer state: checked before a leader's append,
// applied after every append, rebuilt from the segments at open.
#include <algorithm>
#include <climits>
#include <vector>

#include "base/log.h"
#include "model/record_batch_header.h"
#include "storage/log.h"

namespace samsa {
namespace {

// The producer fields of a batch (header only); nullopt for a batch without
// a producer id, and for control batches (transactions: not served).
std::optional<ProducerBatch> producer_batch(const uint8_t* header) {
  RecordBatchHeader h(header);
  if (h.producer_id().value() < 0 || h.is_control() || h.base_sequence() < 0) return std::nullopt;
  int32_t delta = h.last_offset_delta();
  int64_t last_seq = int64_t(h.base_sequence()) + delta;
  if (last_seq > INT32_MAX) last_seq -= int64_t(INT32_MAX) + 1;  // wraps as the client's does
  return ProducerBatch{h.producer_id(), h.producer_epoch(), h.base_sequence(), int32_t(last_seq),
                       h.base_offset(),  h.last_offset(),    h.max_timestamp()};
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

void Log::apply_producers(ByteView batches) {
  for (size_t at = 0; at + batch_layout::kHeaderSize <= batches.size();) {
    RecordBatchHeader h(batches.data() + at);
    if (std::optional<ProducerBatch> b = producer_batch(batches.data() + at)) producers_.apply(*b);
    at += size_t(h.total_size());
  }
}

// Every batch header from the log start on (a whole-log scan: snapshots are
// not written yet, so recovery reads each segment's headers once).
Status Log::rebuild_producer_state() {
  producers_.clear();
  uint8_t header[batch_layout::kHeaderSize];
  for (auto& [base, seg] : segments_) {
    if (!seg->log_file()) continue;
    const File& file = *seg->log_file();
    BatchScanner scanner(file, 0, seg->size());
    for (;;) {
      ASSIGN_OR_RETURN(std::optional<ScannedBatch> next, scanner.next(false));
      if (!next) break;
      if (next->frame.last_offset < log_start_) continue;
      ASSIGN_OR_RETURN(size_t n, file.read_at(header, sizeof header, next->position));
      if (n < sizeof header) break;
      if (std::optional<ProducerBatch> b = producer_batch(header)) producers_.apply(*b);
    }
    load_stats_.producer_state_bytes_read += scanner.bytes_read();
  }
  if (!producers_.producers().empty()) {
    LOG_INFO("storage", "{}: producer state rebuilt from the log: {} producers", tp_.to_string(),
             producers_.producers().size());
  }
  return ok_status();
}

}  // namespace samsa

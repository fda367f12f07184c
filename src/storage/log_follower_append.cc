// Log::append_as_follower: a follower's append of the leader's batches as
// they are (Kafka's UnifiedLog.appendAsFollower). Kept apart from the
// leader's append() (log.cc), which assigns offsets and epochs: here nothing
// in the bytes changes, so the follower's log is the leader's byte for byte.
#include "base/log.h"
#include "model/record_batch_header.h"
#include "storage/log.h"

namespace samsa {

namespace {
Error corrupt(const TopicPartition& tp, const std::string& why) {
  return Error(ErrorKind::kCorrupt, tp.to_string() + ": follower append refused: " + why);
}
}  // namespace

// Kafka's rules for a replicated append (analyzeAndValidateRecords with
// validateAndAssignOffsets = false, ignoreRecordSize = true):
//   - every batch whole, magic 2, CRC-32C valid (CORRUPT_MESSAGE);
//   - the first batch starts at or after the log end (UnexpectedAppendOffset),
//     each next one after the previous one's last offset ("out of order
//     offsets"). A forward gap is allowed: a compacted leader log has them;
//   - partition leader epochs never go down, from batch to batch and against
//     the epoch cache's latest entry (the follower truncated to the point of
//     divergence before fetching, so an older epoch means a bad peer);
//   - max.message.bytes is not checked (the leader accepted the batch under
//     its own config), segment.bytes is.
Result<FollowerAppendResult> Log::check_follower_batches(ByteView batches) const {
  if (batches.empty()) return corrupt(tp_, "no batches");
  if (batches.size() > size_t(config_.segment_bytes)) {
    return Error(ErrorKind::kInvalidArgument, "RECORD_BATCH_TOO_LARGE: " + std::to_string(batches.size()) +
                                                  " bytes exceed segment.bytes");
  }
  FollowerAppendResult r{kNoOffset, kNoOffset, kNoLeaderEpoch, -1};
  Offset next = log_end_;
  LeaderEpoch epoch = epochs_->latest() ? epochs_->latest()->epoch : kNoLeaderEpoch;
  for (size_t at = 0; at < batches.size();) {
    Result<BatchFrame> frame = parse_batch_frame(batches.subspan(at));
    if (!frame.ok()) return corrupt(tp_, frame.error().message());
    if (size_t(frame->size) > batches.size() - at) return corrupt(tp_, "partial batch at the end");
    RETURN_IF_ERROR(check_batch(batches.subspan(at, size_t(frame->size))));
    if (frame->base_offset < next) {
      return corrupt(tp_, "batch at " + std::to_string(frame->base_offset.value()) + " below the next offset " +
                              std::to_string(next.value()));
    }
    LeaderEpoch batch_epoch = RecordBatchHeader(batches.data() + at).partition_leader_epoch();
    if (batch_epoch < epoch) {
      return corrupt(tp_, "leader epoch " + std::to_string(batch_epoch.value()) + " after epoch " +
                              std::to_string(epoch.value()));
    }
    epoch = batch_epoch;
    if (r.first_offset == kNoOffset) r.first_offset = frame->base_offset;
    r.last_offset = frame->last_offset;
    r.max_timestamp = std::max(r.max_timestamp, frame->max_timestamp);
    next = frame->last_offset + 1;
    at += size_t(frame->size);
  }
  r.last_epoch = epoch;
  if (r.last_offset - log_end_ > INT32_MAX / 2) {  // offsets must stay relative-int32 within one segment
    return Error(ErrorKind::kInvalidArgument, "RECORD_BATCH_TOO_LARGE: append spans too many offsets");
  }
  return r;
}

// Each batch's epoch that is newer than the cache's latest starts there
// (UnifiedLog.maybeAssignEpochStartOffset per batch).
Status Log::assign_follower_epochs(ByteView batches) {
  for (size_t at = 0; at < batches.size();) {
    RecordBatchHeader h(batches.data() + at);
    LeaderEpoch epoch = h.partition_leader_epoch();
    if (epoch >= LeaderEpoch(0) && (!epochs_->latest() || epoch > epochs_->latest()->epoch)) {
      RETURN_IF_ERROR(epochs_->assign(epoch, h.base_offset()));
    }
    at += size_t(h.total_size());
  }
  return ok_status();
}

Result<FollowerAppendResult> Log::append_as_follower(ByteView batches) {
  if (closed_) return Error(ErrorKind::kClosed, tp_.to_string() + " is closed");
  if (failure_) return *failure_;
  RETURN_IF_ERROR(check_writable());
  ASSIGN_OR_RETURN(FollowerAppendResult r, check_follower_batches(batches));
  const int64_t now_wall = clock_.wall_ms();
  if (active().should_roll(config_, int64_t(batches.size()), r.last_offset, r.max_timestamp, now_wall)) {
    RETURN_IF_ERROR(roll());
  }
  Status assigned = assign_follower_epochs(batches);
  if (!assigned.ok()) return write_failed(assigned.error());
  Status written = active().append(batches, r.first_offset, r.last_offset, r.max_timestamp);
  if (!written.ok()) return write_failed(written.error());
  note_write_succeeded();
  Status applied = apply_producers(batches);
  const Offset old_end = log_end_;
  log_end_ = r.last_offset + 1;
  if (!applied.ok()) return fail(applied.error());
  unflushed_messages_ += log_end_ - old_end;
  if (unflushed_messages_ >= config_.flush_messages) RETURN_IF_ERROR(flush());
  return r;
}

}  // namespace samsa

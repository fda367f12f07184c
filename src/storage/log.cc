#include "storage/log.h"

#include <algorithm>
#include <cstdint>

#include "base/log.h"
#include "model/record_batch.h"
#include "model/record_batch_header.h"
#include "storage/file_util.h"
#include "storage/fsync_job.h"
#include "storage/partition_metadata.h"

namespace samsa {

namespace fs = std::filesystem;
namespace bl = batch_layout;

Log::Log(FileSystem& files, fs::path dir, TopicPartition tp, LogConfig config, Clock& clock, uint64_t seed)
    : files_(files), dir_(std::move(dir)), tp_(std::move(tp)), config_(config), clock_(clock), rng_(seed) {
  last_flush_ms_ = clock_.monotonic_ms();
}

Log::~Log() = default;

Result<std::unique_ptr<Log>> Log::open(FileSystem& files, fs::path dir, TopicPartition tp, LogConfig config,
                                       Clock& clock, RecoveryOptions options, uint64_t seed) {
  RETURN_IF_ERROR(file_util::create_directories_durably(files, dir));
  std::unique_ptr<Log> log(new Log(files, std::move(dir), std::move(tp), config, clock, seed));
  RETURN_IF_ERROR(log->load(options));
  return log;
}

Error Log::fail(Error error) {
  LOG_ERROR("storage", "{}: {}; refusing further appends", tp_.to_string(), error.to_string());
  failure_ = error;
  return error;
}

// A write that failed for want of space (ENOSPC, EDQUOT) wrote nothing that
// counts (Segment::append is all or nothing), so the log stays readable and
// is writable again once space is freed; anything else takes it offline.
Error Log::write_failed(Error error) {
  if (error.kind() != ErrorKind::kNoSpace) return fail(std::move(error));
  if (!out_of_space_) {
    LOG_ERROR("storage", "{}: {}; refusing appends (reads go on), retrying every {} ms", tp_.to_string(),
              error.to_string(), kOutOfSpaceRetryMs);
  }
  out_of_space_ = OutOfSpace{error, clock_.monotonic_ms() + kOutOfSpaceRetryMs};
  return error;
}

// Out of space: appends are refused without touching the disk until the
// retry time; then the next append tries again, after cutting any torn tail
// a failed append could not cut at the time.
Status Log::check_writable() {
  if (!out_of_space_) return ok_status();
  if (clock_.monotonic_ms() < out_of_space_->retry_at_mono_ms) {
    return Error(ErrorKind::kNoSpace, tp_.to_string() + " refuses appends until its log dir has space again (" +
                                          out_of_space_->error.message() + ")");
  }
  Status cut = active().cut_torn_tail();
  if (!cut.ok()) return write_failed(cut.error());
  return ok_status();
}

void Log::note_write_succeeded() {
  if (!out_of_space_) return;
  LOG_INFO("storage", "{}: appends resumed, the log dir has space again", tp_.to_string());
  out_of_space_.reset();
}

int64_t Log::size_bytes() const {
  int64_t n = 0;
  for (const auto& [base, seg] : segments_) n += seg->size();
  return n;
}

Status Log::add_segment(Offset base) {
  ASSIGN_OR_RETURN(std::unique_ptr<Segment> seg, Segment::create(files_, dir_, base, config_, clock_.wall_ms()));
  if (config_.segment_jitter_ms > 0) {
    seg->set_roll_jitter_ms(int64_t(rng_.uniform(uint64_t(config_.segment_jitter_ms))));
  }
  segments_[base] = std::move(seg);
  dir_dirty_ = true;
  return ok_status();
}

Result<AppendResult> Log::append(uint8_t* batches, size_t size, LeaderEpoch epoch) {
  if (closed_) return Error(ErrorKind::kClosed, tp_.to_string() + " is closed");
  if (failure_) return *failure_;
  RETURN_IF_ERROR(check_writable());
  if (size == 0) return Error(ErrorKind::kCorrupt, "no batches");
  if (size > size_t(config_.segment_bytes)) {
    return Error(ErrorKind::kInvalidArgument, "RECORD_BATCH_TOO_LARGE: " + std::to_string(size) +
                                                  " bytes exceed segment.bytes");
  }
  const bool append_time = config_.message_timestamp_type == TimestampType::kLogAppendTime;
  const int64_t now_wall = clock_.wall_ms();
  Offset next = log_end_;
  int64_t max_ts = -1;
  size_t at = 0;
  while (at < size) {  // frame checks only: the caller validated the batches
    auto frame = parse_batch_frame(ByteView(batches + at, size - at));
    if (!frame.ok()) return frame.error();
    if (size_t(frame->size) > size - at) return Error(ErrorKind::kCorrupt, "partial batch at the end");
    if (frame->size > int64_t(config_.max_message_bytes)) {
      return Error(ErrorKind::kInvalidArgument, "RECORD_TOO_LARGE: batch of " + std::to_string(frame->size) +
                                                    " bytes exceeds max.message.bytes");
    }
    at += size_t(frame->size);
  }
  if (std::optional<AppendResult> answered = check_producers(batches, size)) return *answered;
  for (at = 0; at < size;) {
    uint8_t* b = batches + at;
    RecordBatchHeader h(b);
    int64_t batch_size = h.total_size();
    int32_t delta = h.last_offset_delta();
    set_base_offset(b, next);
    set_partition_leader_epoch(b, epoch);
    if (append_time) stamp_log_append_time(b, size_t(batch_size), now_wall);
    max_ts = std::max(max_ts, h.max_timestamp());
    next = next + (int64_t(delta) + 1);
    at += size_t(batch_size);
  }
  const Offset first = log_end_;
  const Offset last = next - 1;
  if (last - first > INT32_MAX / 2) {  // offsets must stay relative-int32 within one segment
    return Error(ErrorKind::kInvalidArgument, "RECORD_BATCH_TOO_LARGE: request spans too many offsets");
  }
  if (active().should_roll(config_, int64_t(size), last, max_ts, now_wall)) RETURN_IF_ERROR(roll());
  if (!epochs_->latest() || epoch > epochs_->latest()->epoch) {
    Status assigned = epochs_->assign(epoch, first);
    if (!assigned.ok()) return write_failed(assigned.error());
  }
  Status written = active().append(ByteView(batches, size), first, last, max_ts);
  if (!written.ok()) return write_failed(written.error());
  note_write_succeeded();
  Status applied = apply_producers(ByteView(batches, size));
  log_end_ = next;
  if (!applied.ok()) return fail(applied.error());
  unflushed_messages_ += next - first;
  if (unflushed_messages_ >= config_.flush_messages) RETURN_IF_ERROR(flush());
  AppendResult r{first, last, std::nullopt, log_start_};
  if (append_time) r.log_append_time_ms = now_wall;
  return r;
}

Result<ReadResult> Log::read(Offset from, int32_t max_bytes, Offset upper_bound_exclusive, bool min_one_message) {
  // Offline: serve nothing (KAFKA_STORAGE_ERROR), not even older data. Out
  // of space is not offline: what is on disk is intact and still served.
  if (failure_) {
    return Error(ErrorKind::kIo, tp_.to_string() + " is offline after a storage error: " + failure_->message());
  }
  if (from < log_start_ || from > log_end_) {
    return Error(ErrorKind::kNotFound, "OFFSET_OUT_OF_RANGE: " + std::to_string(from.value()) + " not in [" +
                                           std::to_string(log_start_.value()) + ", " +
                                           std::to_string(log_end_.value()) + "] of " + tp_.to_string());
  }
  ReadResult out{FileRegion{}, log_start_, log_end_};
  if (from == log_end_ || from >= upper_bound_exclusive || max_bytes < 0) return out;
  auto it = segments_.upper_bound(from);
  if (it != segments_.begin()) --it;
  for (; it != segments_.end(); ++it) {
    ASSIGN_OR_RETURN(std::optional<ScannedBatch> first, it->second->translate_offset(from));
    if (!first) continue;  // nothing at or after `from` here (gap): next segment
    ASSIGN_OR_RETURN(out.records, it->second->read(*first, max_bytes, upper_bound_exclusive, min_one_message));
    return out;
  }
  return out;
}

Result<std::optional<TimestampOffset>> Log::offset_for_timestamp(int64_t ts) {
  if (failure_) return Error(ErrorKind::kIo, tp_.to_string() + " is offline after a storage error");
  for (auto& [base, seg] : segments_) {
    if (seg->max_timestamp() < ts) continue;
    ASSIGN_OR_RETURN(std::optional<TimestampOffset> found, seg->find_offset_by_timestamp(ts));
    if (!found) continue;
    if (found->offset < log_start_) found->offset = log_start_;
    return found;
  }
  return std::optional<TimestampOffset>();
}

Result<std::optional<TimestampOffset>> Log::offset_of_max_timestamp() {
  if (failure_) return Error(ErrorKind::kIo, tp_.to_string() + " is offline after a storage error");
  Segment* latest = nullptr;
  for (auto& [base, seg] : segments_) {
    if (seg->empty()) continue;
    if (!latest || seg->max_timestamp() > latest->max_timestamp()) latest = seg.get();  // first of equals
  }
  if (!latest) return std::optional<TimestampOffset>();
  ASSIGN_OR_RETURN(std::optional<TimestampOffset> found, latest->find_offset_by_timestamp(latest->max_timestamp()));
  if (found && found->offset < log_start_) found->offset = log_start_;
  return found;
}

Status Log::roll() {
  if (closed_) return Error(ErrorKind::kClosed, tp_.to_string() + " is closed");
  if (active().empty()) return ok_status();
  Segment& old = active();
  Offset base = log_end_;
  // Finalize first: if it or the new segment fails for want of space, the
  // old segment becomes active again and the log stays as it was.
  Status rolled = old.finalize();
  if (rolled.ok()) rolled = add_segment(base);
  if (!rolled.ok()) {
    if (rolled.error().kind() != ErrorKind::kNoSpace) return fail(rolled.error());
    Status reactivated = old.make_active(config_);
    return write_failed(reactivated.ok() ? rolled.error() : reactivated.error());
  }
  LOG_DEBUG("storage", "{}: rolled new segment at {}", tp_.to_string(), base.value());
  return flush_rolled_segment(old, base, write_rolled_snapshot(base));
}

// fsync the finished segment, so the recovery point can advance to its end
// and an unclean restart scans only the active segment. Order: .log data,
// its indexes, the producer snapshot at `base` (if one was written: it
// claims the data below it, log_snapshots.cc), then the directory (both
// segments' entries and the snapshot's). Done by the
// BlockingExecutor, off this thread where the owner provides one; until it
// reports, the recovery point stays where it was (a crash meanwhile
// recovers the segment from the older point). The job holds the segment's
// own Files, so it needs no descriptor of its own.
Status Log::flush_rolled_segment(Segment& old, Offset base, FilePtr snapshot) {
  std::vector<FilePtr> to_sync = old.files_to_flush();
  if (snapshot) to_sync.push_back(std::move(snapshot));
  auto job = std::make_shared<const FsyncJob>(files_, std::move(to_sync), dir_);
  const bool failed_before = failure_.has_value();
  const Offset old_base = old.base_offset();
  const uint64_t truncations = truncations_;
  std::weak_ptr<const char> alive = lifetime_;
  ++pending_flushes_;
  auto on_outcome = [this, alive, base, old_base, truncations](Status outcome) {
    if (alive.expired()) return;
    --pending_flushes_;
    if (closed_) return;
    if (!outcome.ok()) {
      // Nothing of that segment is known to be on disk, whatever a flush()
      // in between claimed (the kernel reports a write-back error once).
      recovery_point_ = std::min(recovery_point_, old_base);
      fail(outcome.error());
      return;
    }
    // Never past a segment whose fsync failed, nor over data written again
    // after a truncation below `base` since the roll.
    if (failure_ || truncations != truncations_) return;
    recovery_point_ = std::max(recovery_point_, std::min(base, log_end_));
  };
  blocking_->submit([job = std::move(job)] { return job->run(); }, std::move(on_outcome));
  // An inline executor has reported already: its failure is this roll's.
  if (failure_ && !failed_before) return *failure_;
  return ok_status();
}

Status Log::flush() {
  if (segments_.empty()) return ok_status();  // deleted
  auto it = segments_.upper_bound(recovery_point_);
  if (it != segments_.begin()) --it;
  for (; it != segments_.end(); ++it) {
    Status st = it->second->flush();
    if (!st.ok()) return fail(st.error());
  }
  if (dir_dirty_) {
    Status st = files_.sync_dir(dir_);
    if (!st.ok()) return fail(st.error());
    dir_dirty_ = false;
  }
  recovery_point_ = log_end_;
  unflushed_messages_ = 0;
  last_flush_ms_ = clock_.monotonic_ms();
  return ok_status();
}

Status Log::maybe_flush(int64_t now_ms) {
  if (closed_ || unflushed_messages_ == 0) return ok_status();
  if (config_.flush_ms == kInt64Max || now_ms - last_flush_ms_ < config_.flush_ms) return ok_status();
  return flush();
}

// The age of a segment for retention.ms: its largest record timestamp, or
// the .log mtime when it has none (Kafka's lastModified fallback).
static int64_t segment_time(const Segment& seg) {
  return seg.max_timestamp() >= 0 ? seg.max_timestamp() : seg.last_modified_ms();
}

Result<int> Log::delete_old_segments(int64_t now_ms) {
  if (closed_ || failure_) return 0;
  const bool policy = config_.cleanup_policy.delete_segments;
  int64_t total = size_bytes();
  int deleted = 0;
  while (true) {
    auto it = segments_.begin();
    Segment& seg = *it->second;
    bool is_active = std::next(it) == segments_.end();
    Offset next_base = is_active ? log_end_ : std::next(it)->first;
    bool below_start = !is_active && next_base <= log_start_;
    bool by_time = policy && config_.retention_ms >= 0 && !seg.empty() &&
                   now_ms - segment_time(seg) > config_.retention_ms;
    bool by_size = policy && config_.retention_bytes >= 0 && !seg.empty() &&
                   total - seg.size() >= config_.retention_bytes;
    if (!below_start && !by_time && !by_size) break;
    if (is_active) {
      // As Kafka: an expired active segment is rolled so that it can go;
      // the log then restarts empty at its end offset.
      RETURN_IF_ERROR(roll());
      continue;
    }
    LOG_INFO("storage", "{}: deleting segment {} ({})", tp_.to_string(), it->first.value(),
             below_start ? "below log start" : by_time ? "retention.ms" : "retention.bytes");
    ++layout_version_;
    total -= seg.size();
    log_start_ = std::max(log_start_, next_base);
    ASSIGN_OR_RETURN(std::vector<fs::path> doomed, seg.rename_for_deletion());
    segments_.erase(it);
    dir_dirty_ = true;
    pending_deletes_.push_back(PendingDelete{clock_.monotonic_ms() + config_.file_delete_delay_ms, std::move(doomed)});
    ++deleted;
  }
  if (deleted > 0) {
    RETURN_IF_ERROR(epochs_->truncate_from_start(log_start_));
    // The snapshots at the deleted segments' bases go with them (Kafka's
    // deleteProducerSnapshots); one at the new log start stays.
    RETURN_IF_ERROR(remove_snapshots([&](Offset at) { return at < log_start_; }, /*durable=*/false));
    RETURN_IF_ERROR(delete_pending_files(clock_.monotonic_ms()));
  }
  return deleted;
}

Status Log::delete_pending_files(int64_t now_mono_ms) {
  Status first;
  while (!pending_deletes_.empty() && (pending_deletes_.front().due_mono_ms <= now_mono_ms || closed_)) {
    for (const auto& p : pending_deletes_.front().files) {
      Status st = files_.remove(p);
      if (!st.ok() && first.ok()) first = st;
    }
    pending_deletes_.erase(pending_deletes_.begin());
  }
  return first;
}

Status Log::advance_log_start_offset(Offset offset) {
  if (offset > log_end_) return Error(ErrorKind::kInvalidArgument, "log start beyond log end");
  log_start_ = std::max(log_start_, offset);
  return epochs_->truncate_from_start(log_start_);
}

Status Log::truncate_to(Offset offset) {
  ++truncations_;
  if (closed_) return Error(ErrorKind::kClosed, tp_.to_string() + " is closed");
  if (offset >= log_end_) {
    // No record to cut, but the epoch cache is cut all the same (Kafka's
    // UnifiedLog.truncateTo): a broker that led an epoch without appending
    // to it keeps that epoch's start at its log end, a follower would name
    // it as its last fetched epoch for ever and its leader answer a
    // divergence to every fetch (chaos seed 1004: empty __consumer_offsets
    // partitions, 40 fetches a second, never back in the ISR).
    return epochs_->truncate_from_end(log_end_);
  }
  if (offset < log_start_ || offset <= segments_.begin()->first) return truncate_fully_and_start_at(offset);
  ++layout_version_;
  while (segments_.rbegin()->first > offset) {
    auto last = std::prev(segments_.end());
    RETURN_IF_ERROR(last->second->remove_files());
    segments_.erase(last);
  }
  ASSIGN_OR_RETURN(int64_t removed, active().truncate_to(offset));
  RETURN_IF_ERROR(active().make_active(config_));
  log_end_ = active().next_offset();
  // The state as of the new end: the latest snapshot at or below it and the
  // batches after it (the truncated batches may have pushed older ones of
  // a producer out of its last five). Snapshots above the end go durably.
  if (Status reloaded = load_producer_state(); !reloaded.ok()) return fail(reloaded.error());
  recovery_point_ = std::min(recovery_point_, log_end_);
  RETURN_IF_ERROR(epochs_->truncate_from_end(log_end_));
  LOG_INFO("storage", "{}: truncated to {} ({} bytes in the last segment)", tp_.to_string(), log_end_.value(),
           removed);
  return ok_status();
}

Status Log::truncate_fully_and_start_at(Offset offset) {
  ++truncations_;
  if (closed_) return Error(ErrorKind::kClosed, tp_.to_string() + " is closed");
  ++layout_version_;
  for (auto& [base, seg] : segments_) RETURN_IF_ERROR(seg->remove_files());
  segments_.clear();
  RETURN_IF_ERROR(add_segment(offset));
  log_start_ = log_end_ = recovery_point_ = offset;
  producers_.clear();
  unreplicated_txns_.clear();
  RETURN_IF_ERROR(remove_snapshots([](Offset) { return true; }, /*durable=*/true));
  unflushed_messages_ = 0;
  if (epochs_) RETURN_IF_ERROR(epochs_->clear());
  LOG_INFO("storage", "{}: truncated fully, restarting at {}", tp_.to_string(), offset.value());
  return ok_status();
}

Status Log::close() {
  if (closed_) return ok_status();
  if (failure_) {  // offline: leave the files to recovery at the next start (no clean marker)
    closed_ = true;
    return *failure_;
  }
  Status st = active().finalize();
  if (st.ok()) st = flush();
  // The next open replays nothing. Not when one is there already (an idle
  // log, or a roll just before) nor for an empty log (a replay of nothing
  // gives the same state): Kafka's takeSnapshot skips those too, and a
  // broker with many idle partitions stops without an fsync for each.
  if (st.ok() && log_end_ > log_start_ && !snapshots_.count(log_end_)) write_durable_snapshot("at close");
  closed_ = true;
  Status removed = delete_pending_files(kInt64Max);
  return st.ok() ? removed : st;
}

fs::path renamed_partition_dir(const fs::path& dir, std::string_view suffix, Rng& rng) {
  std::string uuid = fmt::format("{:016x}{:016x}", rng.next_u64(), rng.next_u64());
  fs::path renamed = dir;
  renamed += "." + uuid + std::string(suffix);
  return renamed;
}

Status Log::assign_topic_id(const Uuid& id) {
  ASSERT(!id.is_zero());
  RETURN_IF_ERROR(write_partition_metadata(files_, dir_, id));
  topic_id_ = id;
  return ok_status();
}

Status Log::delete_dir() {
  closed_ = true;
  ++layout_version_;
  segments_.clear();  // closes files; FileRegions in flight keep theirs open
  return delete_partition_dir(files_, dir_, rng_);
}

Status delete_partition_dir(FileSystem& files, const fs::path& dir, Rng& rng) {
  fs::path doomed = renamed_partition_dir(dir, kDeleteDirSuffix, rng);
  // The rename is made durable before anything inside is removed: a crash
  // then leaves either the whole dir under its name (a stray, removed by
  // the log manager as its topic id is no longer assigned here) or a
  // `-delete` dir (removed at startup), never a half-emptied partition.
  RETURN_IF_ERROR(files.rename(dir, doomed));
  RETURN_IF_ERROR(files.sync_dir(file_util::parent_dir(dir)));
  return files.remove_all(doomed);
}

}  // namespace samsa

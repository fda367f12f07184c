// The Log's producer-state snapshots (producer_snapshot.h): written at each
// roll and at close, loaded at open and after a truncation, removed with the
// segments below them and by truncation above the new end.
//
// A snapshot at offset X claims the state of every batch below X, so it
// must never be used with data below X that differs from what it saw:
//   - At a roll it is written on the loop thread, unsynced, and fsynced by
//     the rolled segment's FsyncJob after that segment's data, then the
//     directory; at close after flush(); at open after recovery's flush.
//   - Page write-back may still put a snapshot on disk before data that a
//     crash then loses. Recovery cuts the log at the first lost byte, and
//     load_producer_state() deletes every snapshot above the log end it
//     recovered: a snapshot that is used sits on data that is there.
//   - Truncation deletes the snapshots above the new end and fsyncs the
//     directory before anything is written at their offsets again.
// A snapshot only saves work: a missing or corrupt one costs a longer
// replay, never a wrong state; a failure to write one is a warning.

#include "base/log.h"
#include "storage/file_util.h"
#include "storage/log.h"
#include "storage/producer_snapshot.h"

namespace samsa {

namespace fs = std::filesystem;

Status Log::load_producer_state() {
  RETURN_IF_ERROR(remove_snapshots([&](Offset at) { return at < log_start_ || at > log_end_; }, /*durable=*/true));
  producers_.clear();
  ASSIGN_OR_RETURN(bool loaded, load_latest_snapshot());
  if (loaded) producers_.remove_before(log_start_);  // as a replay from the start would skip them
  return replay_producers_from(loaded ? Offset(load_stats_.producer_snapshot_offset) : log_start_);
}

// The newest snapshot that reads whole and valid; one that does not is
// removed with a warning and the next older one tried. false: none.
Result<bool> Log::load_latest_snapshot() {
  load_stats_.producer_snapshot_offset = -1;
  while (!snapshots_.empty()) {
    const Offset at = *snapshots_.rbegin();
    const fs::path path = producer_snapshot_path(dir_, at);
    Result<std::string> bytes = file_util::read_file(files_, path, kMaxProducerSnapshotBytes);
    Result<ProducerMap> producers = bytes.ok() ? decode_producer_snapshot(as_bytes(*bytes), at)
                                               : Result<ProducerMap>(bytes.error());
    if (producers.ok()) {
      producers_.restore(std::move(producers).value());
      load_stats_.producer_snapshot_offset = at.value();
      return true;
    }
    LOG_WARN("storage", "{}: removing unusable producer snapshot {}: {}", tp_.to_string(),
             path.filename().string(), producers.error().to_string());
    RETURN_IF_ERROR(files_.remove(path));
    snapshots_.erase(at);
  }
  return false;
}

// The state now (every batch below log_end_ applied) as `<at>.snapshot`,
// written but not synced; the oldest beyond kKeptProducerSnapshots go.
Result<FilePtr> Log::write_producer_snapshot(Offset at) {
  ASSERT(at == log_end_);
  Bytes bytes = encode_producer_snapshot(producers_.producers());
  if (bytes.size() > kMaxProducerSnapshotBytes) {
    return Error(ErrorKind::kInvalidArgument, std::to_string(producers_.producers().size()) +
                                                  " producers exceed the producer snapshot limit");
  }
  const fs::path path = producer_snapshot_path(dir_, at);
  ASSIGN_OR_RETURN(FilePtr file, files_.open(path, OpenMode::kTruncate));
  snapshots_.insert(at);
  if (Status written = file->write_at(bytes, 0); !written.ok()) {
    (void)files_.remove(path);  // a torn one would fail its CRC; fewer files to read
    snapshots_.erase(at);
    return written.error();
  }
  while (snapshots_.size() > kKeptProducerSnapshots) {
    const Offset oldest = *snapshots_.begin();
    if (Status removed = files_.remove(producer_snapshot_path(dir_, oldest)); !removed.ok()) {
      LOG_WARN("storage", "{}: old producer snapshot {} not removed: {}", tp_.to_string(), oldest.value(),
               removed.error().to_string());
      break;
    }
    snapshots_.erase(oldest);
  }
  return file;
}

// At a roll, for the new segment's base: the rolled segment's FsyncJob
// syncs it after the data. nullptr when it could not be written.
FilePtr Log::write_rolled_snapshot(Offset base) {
  Result<FilePtr> file = write_producer_snapshot(base);
  if (file.ok()) return *file;
  LOG_WARN("storage", "{}: no producer snapshot at {}: {}", tp_.to_string(), base.value(), file.error().to_string());
  return nullptr;
}

// At the log end once everything below it is durable (close, open).
void Log::write_durable_snapshot(const char* why) {
  Result<FilePtr> file = write_producer_snapshot(log_end_);
  Status st = file.ok() ? (*file)->sync() : Status(file.error());
  if (st.ok()) st = files_.sync_dir(dir_);
  if (!st.ok()) {
    LOG_WARN("storage", "{}: no producer snapshot at {} ({}): {}", tp_.to_string(), log_end_.value(), why,
             st.error().to_string());
  }
}

Status Log::remove_snapshots(const std::function<bool(Offset)>& doomed, bool durable) {
  bool removed = false;
  for (auto it = snapshots_.begin(); it != snapshots_.end();) {
    if (!doomed(*it)) {
      ++it;
      continue;
    }
    LOG_INFO("storage", "{}: removing producer snapshot {} (log [{}, {}))", tp_.to_string(), it->value(),
             log_start_.value(), log_end_.value());
    RETURN_IF_ERROR(files_.remove(producer_snapshot_path(dir_, *it)));
    it = snapshots_.erase(it);
    removed = true;
  }
  if (removed && durable) RETURN_IF_ERROR(files_.sync_dir(dir_));
  return ok_status();
}

}  // namespace samsa

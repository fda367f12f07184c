#pragma once
// Segment: one `<base>.log` file of record batches plus its sparse
// OffsetIndex (`.index`) and TimeIndex (`.timeindex`), and its TxnIndex
// (`.txnindex`, only once a transaction was aborted in it). Format and recovery:
// docs/formats/log-segments.md.
//
// Contract:
//   - Owned by its Log; used by one thread at a time (the Log's).
//   - The .log holds whole RecordBatches exactly as on the wire, with
//     broker-assigned offsets, in increasing offset order. size() counts
//     only those bytes (a preallocated file may be longer until trimmed).
//   - Only the last segment of a log is "active" (appended to); its index
//     files are preallocated to segment.index.bytes. finalize() (on roll and
//     on close) writes a last index entry for the last batch and trims the
//     files, so that a clean open knows next_offset() and max_timestamp()
//     from the index files alone, without reading .log data.
//   - Reads hand out FileRegions that share the .log File: they stay valid
//     (the file open) after the segment is closed or deleted.
//   - Every file operation goes through the FileSystem given at create/open
//     (io/file_system.h), which must outlive the segment.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/file.h"
#include "base/file_region.h"
#include "base/result.h"
#include "io/file_system.h"
#include "model/ids.h"
#include "storage/batch_scanner.h"
#include "storage/log_config.h"
#include "storage/offset_index.h"
#include "storage/time_index.h"
#include "storage/txn_index.h"

namespace samsa {

struct SegmentRecovery {
  int64_t bytes_scanned = 0;    // .log bytes read to validate and index
  int64_t bytes_truncated = 0;  // invalid tail removed
  int64_t batches = 0;          // valid batches kept
  std::string problem;          // why the tail was cut ("" if it was not)
};

class Segment {
 public:
  // "00000000000000000042" and the three file paths of a base offset.
  static std::string file_stem(Offset base);
  static std::filesystem::path log_path(const std::filesystem::path& dir, Offset base);
  static std::filesystem::path index_path(const std::filesystem::path& dir, Offset base);
  static std::filesystem::path time_index_path(const std::filesystem::path& dir, Offset base);

  // A new, empty, active segment (any leftover files at `base` are cleared).
  static Result<std::unique_ptr<Segment>> create(FileSystem& files, const std::filesystem::path& dir, Offset base,
                                                 const LogConfig& config, int64_t now_ms);
  // An existing segment, without reading .log data: size from the file,
  // next offset / max timestamp from the index files. If the indexes are
  // missing or inconsistent, needs_rebuild() is true and the caller must
  // recover() before using the segment.
  static Result<std::unique_ptr<Segment>> open(FileSystem& files, const std::filesystem::path& dir, Offset base,
                                               const LogConfig& config, int64_t now_ms);

  ~Segment();
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  Offset base_offset() const { return base_; }
  // One past the last offset stored here (base_offset() when empty).
  Offset next_offset() const { return next_offset_; }
  int64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Largest batch maxTimestamp so far; -1 if none.
  int64_t max_timestamp() const { return max_timestamp_; }
  bool needs_rebuild() const { return needs_rebuild_; }
  const std::string& rebuild_reason() const { return rebuild_reason_; }

  // Validates every batch from the start (frame, magic 2, CRC-32C, offsets
  // increasing and within int32 of the base), rebuilds both indexes, and
  // truncates the .log at the first invalid byte.
  Result<SegmentRecovery> recover();

  // Kafka's roll rule for an append of `bytes` ending at `last_offset` with
  // largest timestamp `max_timestamp_ms`: the segment would exceed
  // segment.bytes, is older than segment.ms, has a full index, or the
  // offsets would not fit in a relative int32.
  bool should_roll(const LogConfig& config, int64_t bytes, Offset last_offset, int64_t max_timestamp_ms,
                   int64_t now_ms);

  // Appends whole batches (offsets first..last, largest timestamp given) with
  // one write, and adds index entries every index.interval.bytes. All or
  // nothing: on failure (ENOSPC, EIO) the segment is as before the call and
  // the bytes that reached the .log are cut off again (torn() until that
  // cut succeeded).
  Status append(ByteView batches, Offset first, Offset last, int64_t max_timestamp_ms);
  // A failed append left bytes past size() that could not be cut yet; no
  // append until cut_torn_tail() succeeds.
  bool torn() const { return torn_; }
  Status cut_torn_tail();

  // The first batch whose last offset >= target (the batch holding target,
  // or the next one after a gap); nullopt if this segment has none.
  Result<std::optional<ScannedBatch>> translate_offset(Offset target);

  // Whole batches starting with `first` (from translate_offset): those with
  // last offset < upper_bound_exclusive, at most max_bytes in total, except
  // that the first batch is returned whole when min_one_message. An empty
  // region (size 0) when nothing qualifies.
  Result<FileRegion> read(const ScannedBatch& first, int32_t max_bytes, Offset upper_bound_exclusive,
                          bool min_one_message);

  // The first record with timestamp >= target_ms in this segment, if any.
  Result<std::optional<TimestampOffset>> find_offset_by_timestamp(int64_t target_ms);

  // Prepares index files for appends (preallocated to segment.index.bytes).
  Status make_active(const LogConfig& config);
  // Becoming inactive (roll) or closing: final index entries for the last
  // batch, indexes and a preallocated .log trimmed to their contents.
  Status finalize();
  // fsync of .log, .index and .timeindex (skipped if nothing changed).
  Status flush();
  // The files flush() would fsync now (none when nothing changed since the
  // last flush), for a flush done elsewhere (storage/fsync_job.h).
  std::vector<FilePtr> files_to_flush();
  // Removes every batch whose last offset >= offset; returns bytes removed.
  Result<int64_t> truncate_to(Offset offset);
  // Closes the files (FileRegions handed out keep the .log open) and unlinks them.
  Status remove_files();
  // The transactions aborted by a marker in this segment (`.txnindex`).
  const TxnIndex& txn_index() const { return txn_index_; }
  // Records the abort whose marker (txn.last_offset) this segment holds.
  Status append_aborted_txn(const AbortedTxn& txn);
  // Drops the aborts whose marker is at or above `offset` (the Log
  // re-derives them when it replays its producer state from there).
  Status truncate_txn_index(Offset offset) { return txn_index_.truncate_to(offset); }
  // Unlinks only the two offset/time index files (before a cleaned .log
  // replaces this one: the .txnindex stays, offsets do not change); the
  // segment must not be used afterwards.
  Status remove_index_files();
  // Kafka's asynchronous delete: closes the files (FileRegions keep the .log
  // open) and renames them to `<name>.deleted`; returns the new paths for the
  // caller to unlink after file.delete.delay.ms. Leftovers are removed at
  // the next open.
  Result<std::vector<std::filesystem::path>> rename_for_deletion();
  // mtime of the .log: the age of a segment without timestamps (Kafka's
  // lastModified fallback for retention.ms); 0 where it is not known.
  int64_t last_modified_ms() const;
  // segment.jitter.ms: this segment rolls jitter ms before segment.ms.
  void set_roll_jitter_ms(int64_t jitter) { roll_jitter_ms_ = jitter; }
  // maxTimestamp of the first batch (-1/nullopt if none): segment.ms and
  // max.compaction.lag.ms age a segment by it.
  std::optional<int64_t> first_batch_timestamp() { return rolling_timestamp(); }
  int64_t created_ms() const { return created_ms_; }

  const std::filesystem::path& log_file_path() const { return log_path_; }
  // The open .log (null after rename_for_deletion/remove_files): the
  // cleaner reads batches through it.
  const FilePtr& log_file() const { return log_file_; }

 private:
  Segment(FileSystem& files, std::filesystem::path dir, Offset base, int64_t now_ms);
  Status open_files(bool truncate);
  void load_from_indexes();
  Status index_batch(const ScannedBatch& batch);
  // What append() changes, so that a failed append can be undone.
  struct TailState {
    int64_t size;
    Offset next_offset;
    int64_t max_timestamp;
    Offset offset_of_max_timestamp;
    int64_t last_batch_position;
    Offset last_batch_last_offset;
    int64_t bytes_since_last_index_entry;
    size_t offset_entries;
    size_t time_entries;
  };
  TailState tail_state() const;
  void restore(const TailState& t);
  Status write_and_index(ByteView batches);
  Status rescan_tail();
  Result<SegmentRecovery> rescan();
  std::optional<int64_t> rolling_timestamp();
  File& file() const { return *log_file_; }

  FileSystem& files_;
  std::filesystem::path dir_;
  std::filesystem::path log_path_;
  Offset base_;
  TxnIndex txn_index_;
  FilePtr log_file_;
  OffsetIndex offset_index_;
  TimeIndex time_index_;
  int64_t size_ = 0;
  Offset next_offset_;
  int64_t max_timestamp_ = -1;
  Offset offset_of_max_timestamp_;
  int64_t last_batch_position_ = -1;  // -1: none
  Offset last_batch_last_offset_;
  int64_t bytes_since_last_index_entry_ = 0;
  int32_t index_interval_bytes_ = 4096;
  int64_t created_ms_;
  int64_t roll_jitter_ms_ = 0;
  std::optional<int64_t> rolling_timestamp_;  // maxTimestamp of the first batch
  bool rolling_timestamp_loaded_ = false;
  bool needs_rebuild_ = false;
  std::string rebuild_reason_;
  bool dirty_ = false;
  bool torn_ = false;  // bytes past size_ from a failed append are still in the .log
};

}  // namespace samsa

#pragma once
// Log: one partition's log, `<log.dir>/<topic>-<partition>/`, an ordered map
// of Segments (base offset -> Segment); the last one is active. Knows nothing
// of network or replication. Format: docs/formats/log-segments.md.
//
// Thread model: a Log is used by one thread at a time (the broker's event
// loop that owns the partition); it has no locks. FileRegions returned by
// read() may be used on any thread: they only share the .log File, which
// stays open after the segment is deleted. Every file operation goes
// through the FileSystem given to open() (io/file_system.h), which must
// outlive the Log. After truncate_to() a
// region may reach past the new end of file: the sender must treat a short
// sendfile (EOF) as the end of the data.
//
// Offsets: log_start_offset() <= every readable offset < log_end_offset().
// log_end_offset() is the next offset append() assigns. recovery_point() is
// the offset below which everything is fsynced.
//
// Errors (Result kinds):
//   read(): kNotFound  <=> Kafka OFFSET_OUT_OF_RANGE (from < log start or
//           from > log end); anything else is a storage failure
//           (KAFKA_STORAGE_ERROR).
//   append(): kInvalidArgument <=> RECORD_TOO_LARGE (a batch above
//           max.message.bytes) or RECORD_BATCH_TOO_LARGE (the request above
//           segment.bytes); kCorrupt <=> CORRUPT_MESSAGE (bytes are not whole
//           v2 batches); kClosed after close(); kIo/kNoSpace: storage failure
//           (KAFKA_STORAGE_ERROR).
//
// Storage failures (docs/operations.md, "A full disk"):
//   - kNoSpace (ENOSPC/EDQUOT) on a write: nothing of the failed append
//     remains (Segment::append is all or nothing, a torn tail is cut), the
//     log stays readable, and appends are refused with kNoSpace without
//     touching the disk for kOutOfSpaceRetryMs; the next append after that
//     tries again and, if the write succeeds, the log is writable again.
//   - Any other write error, and every fsync error (after a failed fsync
//     the kernel may have dropped the dirty pages), takes the log offline:
//     appends and reads refused until a restart recovers it.
// Everything else the produce path checks (CRC, producer fields, timestamp
// bounds) is the caller's validation (model/record_batch.h).

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "base/assert.h"
#include "base/clock.h"
#include "base/file_region.h"
#include "base/rng.h"
#include "base/result.h"
#include "io/file_system.h"
#include "io/inline_blocking_executor.h"
#include "io/runtime.h"
#include "model/control_record.h"
#include "model/ids.h"
#include "model/uuid.h"
#include "storage/batch_check.h"
#include "storage/leader_epoch_cache.h"
#include "storage/log_config.h"
#include "storage/producer_state.h"
#include "storage/segment.h"

namespace samsa {

struct RecoveryOptions {
  // The log dir had the clean-shutdown marker: trust index files and sizes,
  // read no segment data.
  bool had_clean_shutdown = false;
  // From recovery-point-offset-checkpoint: everything below was fsynced.
  // Without a clean shutdown, recovery scans from the segment holding it.
  Offset recovery_point{0};
  // From log-start-offset-checkpoint (0 if absent).
  Offset log_start_offset{0};
};

struct AppendResult {
  Offset first_offset;
  Offset last_offset;
  std::optional<int64_t> log_append_time_ms;  // set when message.timestamp.type=LogAppendTime
  Offset log_start_offset;
  // Idempotent producers (storage/producer_state.h): nothing was written
  // when either is set. duplicate: a retry of a batch appended before, the
  // offsets are the original's (Kafka answers NONE with them).
  bool duplicate = false;
  std::optional<ProducerFault> producer_fault;
};

// What a follower append wrote (append_as_follower).
struct FollowerAppendResult {
  Offset first_offset;        // the first batch's base offset (>= the old log end)
  Offset last_offset;         // the last batch's last offset; the log now ends after it
  LeaderEpoch last_epoch;     // partition leader epoch of the last batch
  int64_t max_timestamp = -1;
};

struct ReadResult {
  FileRegion records;  // whole batches; size 0 (file may be null) = nothing
  Offset log_start_offset;
  Offset log_end_offset;
};

// What open() did, for logs, metrics and tests.
struct LogLoadStats {
  int64_t segments_loaded = 0;
  int64_t segments_recovered = 0;  // scanned and re-indexed
  int64_t bytes_scanned = 0;       // .log bytes read by recovery/rebuilds
  int64_t bytes_truncated = 0;     // invalid tail bytes removed
  int64_t segments_dropped = 0;    // deleted after an invalid tail
  // The producer state (log_snapshots.cc): the offset of the snapshot it
  // was loaded from (-1: none, replayed from the log start), then the .log
  // bytes read and producer batches applied replaying the segments from
  // there. Truncations that reload the state add to them too.
  int64_t producer_snapshot_offset = -1;
  int64_t producer_state_bytes_read = 0;
  int64_t producer_state_batches_read = 0;
};

// Kafka's names for a partition dir on its way out: `<topic>-<p>.<uuid>-delete`
// (being deleted; removed at startup) and `<topic>-<p>.<uuid>-stray` (of no
// known topic; kept, never served, for the operator).
inline constexpr std::string_view kDeleteDirSuffix = "-delete";
inline constexpr std::string_view kStrayDirSuffix = "-stray";
// The uuid part is drawn from `rng` (the node's seed, so a simulated run
// replays the same names).
std::filesystem::path renamed_partition_dir(const std::filesystem::path& dir, std::string_view suffix, Rng& rng);
// Renames `dir` to its `-delete` name, fsyncs the parent, then removes it.
Status delete_partition_dir(FileSystem& files, const std::filesystem::path& dir, Rng& rng);

class Log {
 public:
  // Opens (creating `dir` if needed) and recovers the log. See
  // RecoveryOptions for what is read. `seed` starts the log's random draws
  // (segment roll jitter, the name of its -delete dir): the LogManager
  // passes one drawn from the node's seed, so a seed replays exactly.
  static Result<std::unique_ptr<Log>> open(FileSystem& files, std::filesystem::path dir, TopicPartition tp,
                                           LogConfig config, Clock& clock, RecoveryOptions options,
                                           uint64_t seed = 0);
  // Destroying without close() leaves the files as a crash would (data the
  // kernel accepted is kept; nothing is trimmed or fsynced).
  ~Log();
  Log(const Log&) = delete;
  Log& operator=(const Log&) = delete;

  const TopicPartition& topic_partition() const { return tp_; }
  const std::filesystem::path& dir() const { return dir_; }
  FileSystem& files() const { return files_; }
  // The topic id of partition.metadata (storage/partition_metadata.h), read
  // at open; nullopt for a directory without (a valid) one.
  const std::optional<Uuid>& topic_id() const { return topic_id_; }
  // Writes partition.metadata (durably) and remembers the id.
  Status assign_topic_id(const Uuid& id);
  const LogConfig& config() const { return config_; }
  // New settings apply to the next append/roll/retention check.
  void set_config(const LogConfig& config) { config_ = config; }

  // Appends whole, validated v2 batches in `batches[0..size)`. Assigns
  // offsets by patching baseOffset and partitionLeaderEpoch IN PLACE (and,
  // for LogAppendTime, maxTimestamp/attributes/CRC), rolls first if the
  // active segment would pass segment.bytes / segment.ms / its index size,
  // then writes everything with one write. Flushes when flush.messages is
  // reached.
  Result<AppendResult> append(uint8_t* batches, size_t size, LeaderEpoch epoch);
  // A follower's append (log_follower_append.cc): the leader's batches
  // exactly as they are, offsets, epochs and timestamps untouched. Refused
  // (kCorrupt, nothing written) unless every batch is whole with a valid
  // CRC, the first starts at or after log_end_offset() and each next one
  // after the previous one (gaps: compacted leaders), and the partition
  // leader epochs never go down (nor below the epoch cache's latest). Each
  // new epoch goes into the leader-epoch cache at its batch's base offset.
  // max.message.bytes is not applied (the leader's config accepted them).
  Result<FollowerAppendResult> append_as_follower(ByteView batches);

  Offset log_start_offset() const { return log_start_; }
  Offset log_end_offset() const { return log_end_; }
  Offset recovery_point() const { return recovery_point_; }
  // Where rolled segments are fsynced (default: inline, on this thread).
  // The executor must outlive the Log, or the Log be set back to
  // inline_blocking_executor() before the executor is destroyed. Only with
  // no flush outstanding: a roll on the new executor must not move the
  // recovery point past segments the old one has not reported on.
  void set_blocking_executor(BlockingExecutor& executor) {
    ASSERT(pending_flushes_ == 0);
    blocking_ = &executor;
  }
  int64_t size_bytes() const;
  size_t segment_count() const { return segments_.size(); }
  Offset active_segment_base() const { return segments_.rbegin()->first; }  // not after delete_dir()
  int64_t unflushed_messages() const { return unflushed_messages_; }
  int64_t last_flush_ms() const { return last_flush_ms_; }

  // Whole batches from the one segment holding `from` (or the next one that
  // has data), starting with the batch that contains `from` (clients skip
  // records below it), stopping before upper_bound_exclusive (the batch
  // holding it is excluded), at most max_bytes unless min_one_message and
  // the first batch alone is larger (then exactly that batch).
  Result<ReadResult> read(Offset from, int32_t max_bytes, Offset upper_bound_exclusive, bool min_one_message);

  // The first record with timestamp >= ts (not below log start), or nullopt
  // if every record is older. -1 (latest) / -2 (earliest) are the caller's.
  Result<std::optional<TimestampOffset>> offset_for_timestamp(int64_t ts);

  // ListOffsets -3 (KIP-734): the record with the largest timestamp, the
  // first such record if several share it (as Kafka: the segment with the
  // largest max timestamp, the batch holding it, its first record with that
  // timestamp; the base offset for LogAppendTime). Not below log start;
  // nullopt for an empty log.
  Result<std::optional<TimestampOffset>> offset_of_max_timestamp();

  // Starts a new active segment at log_end_offset() (no-op if the active
  // one is empty); the old one is finalized and fsynced.
  Status roll();
  // fsyncs everything not yet flushed; recovery_point() = log_end_offset().
  Status flush();
  // flush.ms policy: flushes if now_ms - last_flush_ms() >= flush.ms and
  // there is something to flush. now_ms is Clock::monotonic_ms().
  Status maybe_flush(int64_t now_ms);
  // Deletes whole segments that are below the log start offset, older than
  // retention.ms (by max timestamp, or the .log mtime for a segment without
  // timestamps) or beyond retention.bytes (cleanup.policy=delete); advances
  // the log start offset. An active segment that qualifies is rolled first
  // (the log then restarts empty at its end, as Kafka). Files are renamed
  // `*.deleted` and unlinked after file.delete.delay.ms (readers holding a
  // FileRegion are unaffected either way). Returns the number of segments
  // deleted. now_ms is wall-clock (record time).
  Result<int> delete_old_segments(int64_t now_ms);
  // Unlinks the `.deleted` files of segments deleted at least
  // file.delete.delay.ms ago (monotonic time); all of them once closed.
  Status delete_pending_files(int64_t now_mono_ms);
  // DeleteRecords: raises the log start offset (<= log end offset); whole
  // segments below it go at the next delete_old_segments().
  Status advance_log_start_offset(Offset offset);

  // Removes every record at or above `offset` (whole batches: a batch that
  // holds `offset` goes entirely; log_end_offset() becomes its base).
  // No-op if offset >= log_end_offset(). Below the log start: like
  // truncate_fully_and_start_at(offset).
  Status truncate_to(Offset offset);
  // Drops all data; the log restarts empty at `offset` (start = end = offset).
  Status truncate_fully_and_start_at(Offset offset);

  // Clean close: final index entries, trimmed files, everything fsynced.
  // Further appends fail with kClosed. An offline log is not finalized and
  // returns its failure, so that its dir gets no clean-shutdown marker.
  Status close();
  // Deletes the partition (delete_partition_dir). The Log is closed
  // afterwards.
  Status delete_dir();

  const LogLoadStats& load_stats() const { return load_stats_; }

  // The idempotent producers' state (storage/producer_state.h): checked by
  // append(), applied by every append; open() and truncate_to() load it
  // from the latest producer-state snapshot (producer_snapshot.h) at or
  // below the log end and replay the segments after it.
  const ProducerStateTable& producer_state() const { return producers_; }
  // The offsets of the `.snapshot` files kept: one at each roll (the new
  // segment's base), one at close (the log end), the newest
  // kKeptProducerSnapshots of them; none above the log end or below the start.
  const std::set<Offset>& producer_snapshots() const { return snapshots_; }
  static constexpr size_t kKeptProducerSnapshots = 3;
  // producer.id.expiration.ms: forgets producers idle that long (wall time).
  size_t expire_producers(int64_t now_ms, int64_t expiration_ms) {
    return producers_.remove_expired(now_ms, expiration_ms);
  }

  // --- Transactions (log_transactions.cc, docs/transactions.md) ---
  // A leader's transaction marker (WriteTxnMarkers): checked against the
  // producer's state (ProducerStateTable::check_marker; nothing written on
  // a fault, answered in producer_fault), then appended as a control batch
  // like any other. An abort closing an open transaction is recorded in
  // the `.txnindex` of the marker's segment, on every replica (followers
  // and recovery derive it from the marker).
  Result<AppendResult> append_marker(ProducerId producer, ProducerEpoch producer_epoch, TxnMarker marker,
                                     LeaderEpoch epoch, bool require_higher_epoch);
  // The last stable offset for this high watermark: the first offset of
  // the earliest transaction not yet decided (open, or ended by a marker
  // at or above the HW), else the HW. Never above the HW.
  Offset last_stable_offset(Offset high_watermark) const;
  // The aborted transactions (from the segments' `.txnindex`) a fetch from
  // `from` below `upper_bound` must know: marker at or after `from`,
  // first offset below `upper_bound` (Kafka's collectAbortedTransactions).
  std::vector<AbortedTxn> aborted_txns(Offset from, Offset upper_bound) const;

  // leader-epoch-checkpoint (leader_epoch_cache.h): the first offset of
  // every leader epoch that appended, kept in step with truncation and the
  // log start offset. end_offset_for_epoch answers OffsetForLeaderEpoch.
  const std::vector<EpochEntry>& leader_epochs() const { return epochs_->entries(); }
  // A new leader records its epoch at its log end at election, before any
  // append in it (UnifiedLog.maybeAssignEpochStartOffset); older or equal
  // epochs are ignored.
  Status assign_leader_epoch(LeaderEpoch epoch, Offset start_offset) {
    if (epochs_->latest() && epoch <= epochs_->latest()->epoch) return ok_status();
    return epochs_->assign(epoch, start_offset);
  }
  std::optional<EpochEntry> end_offset_for_epoch(LeaderEpoch epoch) const {
    return epochs_->end_offset_for(epoch, log_end_);
  }

  // --- For the cleaner (log_cleaner.h) and tools. ---
  // Every segment, by base offset; the last one is active.
  const std::map<Offset, std::unique_ptr<Segment>>& segments() const { return segments_; }
  // Bumped whenever segments are removed or replaced (retention, truncation,
  // cleaning, deletion), never by appends or rolls: a multi-step reader of
  // non-active segments restarts when it changed.
  uint64_t layout_version() const { return layout_version_; }
  // Swaps the non-active segment at `base` for the cleaned copy of its
  // batches in `cleaned` (written and fsynced by the caller, same offsets,
  // some records dropped). Crash-safe: `cleaned` is renamed to
  // `<base>.log.swap` (the commit point; open() completes an interrupted
  // swap), the old index files removed, then the swap renamed over the
  // `.log`, and the indexes rebuilt from it. An empty cleaned segment that
  // is not the first is removed instead.
  Status replace_segment(Offset base, const std::filesystem::path& cleaned);
  // A failed Log (write/fsync error) refuses appends; the broker reports
  // KAFKA_STORAGE_ERROR for it.
  bool offline() const { return failure_.has_value(); }
  // A write failed for want of space and none has succeeded since: appends
  // are refused (retried every kOutOfSpaceRetryMs), reads are served.
  bool out_of_space() const { return out_of_space_.has_value(); }
  static constexpr int64_t kOutOfSpaceRetryMs = 1000;

 private:
  Log(FileSystem& files, std::filesystem::path dir, TopicPartition tp, LogConfig config, Clock& clock, uint64_t seed);
  // log_loader.cc
  Status load(const RecoveryOptions& options);
  void load_topic_id();
  Result<std::vector<Offset>> scan_dir();
  Status recover_segment(Segment& seg, const char* why);
  Status drop_segments_after(Offset base);
  using SegmentMap = std::map<Offset, std::unique_ptr<Segment>>;
  // After an unclean shutdown: the segment at `it` ends below the base of
  // the one after it, so the records between were lost (log_loader.cc).
  bool ends_before_next_segment(SegmentMap::const_iterator it) const;
  Status complete_swap(const std::filesystem::path& swap_file, Offset base, bool reload);

  Result<FollowerAppendResult> check_follower_batches(ByteView batches) const;
  // log_producers.cc
  std::optional<AppendResult> check_producers(const uint8_t* batches, size_t size) const;
  Status apply_producers(ByteView batches);
  Status apply_marker(const ProducerMarker& marker, Segment& seg);
  Status replay_producers_from(Offset from);
  // log_snapshots.cc
  Status load_producer_state();
  Result<bool> load_latest_snapshot();
  Result<FilePtr> write_producer_snapshot(Offset at);
  FilePtr write_rolled_snapshot(Offset base);
  void write_durable_snapshot(const char* why);
  // Removes the snapshots `doomed` picks; durably (the directory fsynced)
  // when `durable`: a stale snapshot must not come back after a crash once
  // other data can be written at its offsets.
  Status remove_snapshots(const std::function<bool(Offset)>& doomed, bool durable);
  Status assign_follower_epochs(ByteView batches);
  Segment& active() { return *segments_.rbegin()->second; }
  Error fail(Error error);
  Error write_failed(Error error);
  Status check_writable();
  void note_write_succeeded();
  Status add_segment(Offset base);
  Status flush_rolled_segment(Segment& old, Offset base, FilePtr snapshot);

  FileSystem& files_;
  std::filesystem::path dir_;
  TopicPartition tp_;
  LogConfig config_;
  Clock& clock_;
  Rng rng_;  // segment roll jitter, the -delete name
  std::map<Offset, std::unique_ptr<Segment>> segments_;
  Offset log_start_{0};
  Offset log_end_{0};
  Offset recovery_point_{0};
  int64_t unflushed_messages_ = 0;
  int64_t last_flush_ms_ = 0;
  bool dir_dirty_ = false;
  uint64_t layout_version_ = 0;
  bool closed_ = false;
  std::optional<Error> failure_;
  struct OutOfSpace {
    Error error;
    int64_t retry_at_mono_ms;
  };
  std::optional<OutOfSpace> out_of_space_;
  struct PendingDelete {
    int64_t due_mono_ms;
    std::vector<std::filesystem::path> files;
  };
  std::vector<PendingDelete> pending_deletes_;
  LogLoadStats load_stats_;
  std::optional<LeaderEpochCache> epochs_;
  std::optional<Uuid> topic_id_;
  ProducerStateTable producers_;
  // Transactions whose marker the HW had not passed when last asked
  // (last_stable_offset prunes it; a cache of what the log says).
  mutable std::vector<CompletedTxn> unreplicated_txns_;
  std::set<Offset> snapshots_;
  BlockingExecutor* blocking_ = &inline_blocking_executor();
  int pending_flushes_ = 0;     // rolled segments submitted, outcome not yet in
  uint64_t truncations_ = 0;    // a roll's outcome from before a truncation claims nothing
  // Outcomes of flushes that arrive after the Log is gone are dropped.
  std::shared_ptr<const char> lifetime_ = std::make_shared<const char>(0);
};

}  // namespace samsa

#pragma once
// LogCleaner: log compaction (cleanup.policy=compact / compact,delete), the
// counterpart of Kafka's LogCleaner, run in small steps on the thread that
// owns the logs (LogManager::tick), never a whole log at once.
//
// A pass over one log:
//   1. Pick the log: compacted, with dirty bytes (segments from its cleaner
//      checkpoint, the "first dirty offset", up to the first uncleanable
//      segment) at least min.cleanable.dirty.ratio of its non-active bytes,
//      or whose first dirty batch is older than max.compaction.lag.ms. The
//      first uncleanable segment is the active one, or an earlier one whose
//      newest record is younger than min.compaction.lag.ms.
//   2. Build the offset map: key -> offset of its latest record in the dirty
//      range (bounded by map_max_bytes; the range is cut at a segment
//      boundary when full).
//   3. Rewrite every non-active segment below the end of the dirty range: a
//      record is kept iff no later record has its key (null keys and control
//      batches are always kept), and a tombstone only while younger than
//      delete.retention.ms (by its timestamp). Batches keep their base
//      offset and lastOffsetDelta (offsets never move); a batch that lost
//      records is re-encoded with its codec, a batch that lost all is
//      dropped, an unchanged batch is copied byte for byte. A segment where
//      nothing changed is left alone; otherwise its copy replaces it
//      (Log::replace_segment, crash-safe).
//   4. The cleaner checkpoint of the log becomes the end of the range.
//
// Bounded work: step() reads at most `budget_bytes` of segment data per
// call and then returns; the pass resumes at the next call. If the log's
// segments were removed or replaced in between (retention, truncation,
// deletion), the pass is abandoned and its partial output deleted.
//
// Every batch read is CRC-checked; a corrupt one abandons the pass for that
// log (logged), so the cleaner never copies bad bytes into a new segment.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "model/ids.h"
#include "storage/checkpoint_file.h"

namespace samsa {

class Log;

inline constexpr const char* kCleanerOffsetCheckpointFile = "cleaner-offset-checkpoint";

struct CleanerConfig {
  bool enable = true;                            // log.cleaner.enable
  int64_t budget_bytes_per_step = 8 << 20;       // segment bytes read per step (tick)
  int64_t map_max_bytes = 64 << 20;              // log.cleaner.dedupe.buffer.size (keys + overhead)
  int64_t backoff_ms = 15000;                    // log.cleaner.backoff.ms: idle re-check interval
};

struct CleanerStats {
  int64_t passes_completed = 0;
  int64_t passes_abandoned = 0;
  int64_t bytes_read = 0;
  int64_t bytes_written = 0;
  int64_t records_removed = 0;
  int64_t segments_replaced = 0;
};

class LogCleaner {
 public:
  using LogLookup = std::function<Log*(const TopicPartition&)>;

  explicit LogCleaner(CleanerConfig config);
  ~LogCleaner();
  LogCleaner(const LogCleaner&) = delete;
  LogCleaner& operator=(const LogCleaner&) = delete;
  void set_config(const CleanerConfig& config) { config_ = config; }
  const CleanerConfig& config() const { return config_; }

  // First dirty offsets (cleaner-offset-checkpoint); logs absent here are
  // dirty from their start.
  void set_checkpoints(const OffsetCheckpoint& checkpoints) { checkpoints_ = checkpoints; }
  const OffsetCheckpoint& checkpoints() const { return checkpoints_; }
  void forget(const TopicPartition& tp);

  // Does up to one budget of work. `logs`: candidates (all logs); `lookup`
  // finds a log by partition (nullptr once deleted). now_wall_ms is record
  // time (lags, tombstones); now_mono_ms paces the idle re-check. Returns
  // true if it did something.
  bool step(const std::vector<Log*>& logs, const LogLookup& lookup, int64_t now_wall_ms, int64_t now_mono_ms);
  // Runs passes until nothing is cleanable (tests, tools).
  Status clean_all(const std::vector<Log*>& logs, const LogLookup& lookup, int64_t now_wall_ms);
  // Drops the pass in progress (its partial output is deleted).
  void abort();

  bool busy() const { return pass_ != nullptr; }
  const CleanerStats& stats() const { return stats_; }
  // The error that abandoned the last pass, if any (tests).
  const std::string& last_error() const { return last_error_; }

  // The dirty ratio of `log` given its first dirty offset, and whether it
  // must be cleaned now; exposed for tests.
  struct Cleanability {
    Offset first_dirty;
    Offset end_dirty;  // first uncleanable offset (a segment base)
    int64_t clean_bytes = 0;
    int64_t dirty_bytes = 0;
    bool lag_exceeded = false;
    double ratio() const { return clean_bytes + dirty_bytes == 0 ? 0 : double(dirty_bytes) / double(clean_bytes + dirty_bytes); }
  };
  Cleanability cleanability(Log& log, int64_t now_wall_ms) const;

 private:
  struct Pass;
  bool start_pass(const std::vector<Log*>& logs, int64_t now_wall_ms);
  Status build_map(Log& log, int64_t& budget);
  Status rewrite(Log& log, int64_t& budget);
  Status finish_segment(Log& log);
  void abandon(const std::string& why);

  CleanerConfig config_;
  OffsetCheckpoint checkpoints_;
  std::unique_ptr<Pass> pass_;
  CleanerStats stats_;
  std::string last_error_;
  int64_t next_scan_mono_ms_ = 0;
};

}  // namespace samsa

#pragma once
// LogManager: owns the log dirs (log.dirs) and every partition Log in them.
//
// Startup (open): in each dir, reads the clean-shutdown marker
// `.kafka_cleanshutdown` and the checkpoints `recovery-point-offset-
// checkpoint` and `log-start-offset-checkpoint`; opens every
// `<topic>-<partition>` directory (removing `*-delete` leftovers of an
// interrupted deletion, skipping quarantined `*-stray` ones) with those
// RecoveryOptions; then removes the marker, so a crash from now on means
// recovery at the next start. A malformed checkpoint is logged and ignored
// (recovery from offset 0: slower, never wrong).
//
// Topic ids: a directory is named by topic NAME, but belongs to a topic ID
// (partition.metadata). Opening a dir serves nothing; the broker then
// calls remove_stray_logs() with what the metadata assigns here, which
// finishes deletions a crash interrupted, before any partition is created
// (create_log refuses a dir of another topic id).
//
// Shutdown (close): closes (finalizes and fsyncs) every log, writes both
// checkpoints, then writes the marker in each dir whose logs all closed.
//
// Periodic work is tick(now_ms), called by the broker from a timer: flush.ms
// per log, checkpoint writes, retention. Thread model: one thread (the
// broker's event loop), like the Logs it owns. Every file operation goes
// through the FileSystem given to open(), which must outlive the manager.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "base/rng.h"
#include "io/file_system.h"
#include "io/inline_blocking_executor.h"
#include "io/runtime.h"
#include "model/ids.h"
#include "model/uuid.h"
#include "storage/checkpoint_file.h"
#include "storage/log.h"
#include "storage/log_cleaner.h"
#include "storage/log_config.h"

namespace samsa {

inline constexpr const char* kCleanShutdownFile = ".kafka_cleanshutdown";
// The cluster metadata log (`__cluster_metadata-0`) may share a log dir with
// partition logs, as in Kafka; it is opened by the controller, not here.
inline constexpr std::string_view kMetadataTopicPrefix = "__cluster_metadata-";

struct LogManagerConfig {
  std::vector<std::filesystem::path> log_dirs;                 // log.dirs
  int64_t recovery_point_checkpoint_interval_ms = 60000;        // log.flush.offset.checkpoint.interval.ms
  int64_t log_start_offset_checkpoint_interval_ms = 60000;      // log.flush.start.offset.checkpoint.interval.ms
  int64_t retention_check_interval_ms = 300000;                 // log.retention.check.interval.ms
  int64_t flush_check_interval_ms = kInt64Max;                  // log.flush.scheduler.interval.ms
  int64_t producer_id_expiration_ms = 86400000;                 // producer.id.expiration.ms
  int64_t producer_id_expiration_check_interval_ms = 600000;    // producer.id.expiration.check.interval.ms
  CleanerConfig cleaner;                                        // log.cleaner.*
  int64_t high_watermark_checkpoint_interval_ms = 5000;          // replica.high.watermark.checkpoint.interval.ms
  // The node's randomness (drawn from Runtime::seed()): every log's seed and
  // the names of -delete and -stray dirs come from it, so a seed replays.
  uint64_t seed = 0;
};

inline constexpr const char* kReplicationOffsetCheckpointFile = "replication-offset-checkpoint";

// The high watermark of a partition (replication owns it); nullopt = none.
using HighWatermarkSource = std::function<std::optional<Offset>(const TopicPartition&)>;

// The LogConfig of an existing partition found at startup (topic configs
// live in the metadata, not in storage). Empty = the default config.
using LogConfigLookup = std::function<LogConfig(const TopicPartition&)>;

class LogManager {
 public:
  static Result<std::unique_ptr<LogManager>> open(FileSystem& files, LogManagerConfig config,
                                                  LogConfig default_log_config, Clock& clock,
                                                  LogConfigLookup config_for = {});
  // Without close(), the dirs are left as after a crash (no marker).
  ~LogManager();

  // Creates the partition's log in the dir holding the fewest partitions,
  // with partition.metadata naming `topic_id` written before it returns, or
  // returns the existing one. An existing log without a topic id (from
  // before partition.metadata) is adopted: the id is written (a failed
  // write is logged; the log is returned anyway). kAlreadyExists
  // for an existing log, or a directory left in the way, of another topic id
  // (remove_stray_logs first). A zero topic_id (tests, tools) writes no
  // partition.metadata and skips the check.
  // Refused (an error, nothing created) while the descriptors left would
  // fall below the reserve: see leaves_descriptor_reserve().
  Result<Log*> create_log(const TopicPartition& tp, const LogConfig& config, const Uuid& topic_id = Uuid{});

  // A new log opens a few descriptors (segment, two indexes, its directory
  // for fsync). It may be created only if the process keeps a reserve free
  // for what must not fail for want of one (accepting connections, the
  // metadata log, checkpoints): a quarter of RLIMIT_NOFILE, at least 16 and
  // at most 1024 (docs/operations.md, "Resource budget").
  static constexpr int64_t kDescriptorsPerNewLog = 4;
  static int64_t descriptor_reserve(int64_t limit);
  static bool leaves_descriptor_reserve(const FileSystem::DescriptorUsage& usage);

  // nullptr if this broker has no log for tp.
  Log* get(const TopicPartition& tp) const;
  // Removes the log and its directory (delete_partition_dir), then rewrites
  // the checkpoints without it.
  Status delete_log(const TopicPartition& tp);
  // Every log that `assigned` (the partitions the metadata assigns to this
  // broker, with their topic ids) does not list with the log's topic id is
  // taken out of service: deleted when it has a topic id (its topic was
  // deleted or re-created: the deletion was committed, this finishes it) or
  // holds no data; renamed `<tp>.<uuid>-stray` and kept, when it has data
  // but no topic id (unknown provenance: the operator decides). A log
  // without topic id that `assigned` lists by name is kept (create_log
  // adopts it). Checkpoints are rewritten when anything was removed. Every
  // log is attempted; the first error is returned.
  Status remove_stray_logs(const std::map<TopicPartition, Uuid>& assigned);
  // Every log, ordered by topic-partition.
  std::vector<Log*> all() const;
  const std::vector<std::filesystem::path>& log_dirs() const { return config_.log_dirs; }
  // The time source the logs use (their partitions' replication state reads it too).
  Clock& clock() const { return clock_; }
  // Whether a dir had the clean-shutdown marker at startup.
  bool had_clean_shutdown(size_t dir_index) const { return dirs_[dir_index].clean_at_startup; }
  // KIP-966's PreviousBrokerEpoch: the broker epoch every dir's clean-shutdown
  // marker holds ({"version":0,"brokerEpoch":N}, as Kafka's
  // CleanShutdownFileHandler writes it), -1 if any dir was not shut down
  // cleanly or the markers disagree.
  int64_t previous_broker_epoch() const;
  // The broker epoch the clean-shutdown markers will hold (-1: none yet).
  void set_broker_epoch(int64_t epoch) { broker_epoch_ = epoch; }

  Status flush_all();
  Status write_recovery_point_checkpoints();
  Status write_log_start_offset_checkpoints();
  Status write_cleaner_checkpoints();
  // replication-offset-checkpoint: high watermarks from `source`, written
  // by tick() every high_watermark_checkpoint_interval_ms and at close once
  // a source is set. The values read at startup (clamped to each log's end)
  // seed the partitions' high watermarks after a restart.
  void set_high_watermark_source(HighWatermarkSource source) { hw_source_ = std::move(source); }
  // Where every log, present and future, fsyncs its rolled segments and
  // where checkpoint files are written (io/runtime.h); inline until set.
  // Set it back to inline_blocking_executor() before destroying the one
  // given, and before close() (which must finish its writes first).
  void set_blocking_executor(BlockingExecutor& executor);
  std::optional<Offset> checkpointed_high_watermark(const TopicPartition& tp) const;
  Status write_replication_offset_checkpoints();
  // Periodic work due at time now_ms (used only to pace the intervals;
  // flush.ms and the cleaner read the Clock): flush.ms per log,
  // checkpoints, retention, and one bounded step of the log cleaner.
  // Errors are logged; the first is returned after all the work was
  // attempted.
  Status tick(int64_t now_ms);
  LogCleaner& cleaner() { return cleaner_; }

  // Clean shutdown (see above). The manager holds no logs afterwards.
  Status close();

 private:
  struct Dir {
    std::filesystem::path path;
    bool clean_at_startup = false;
    int64_t marker_broker_epoch = -1;  // what its clean-shutdown marker held
    size_t log_count = 0;
  };
  struct Entry {
    std::unique_ptr<Log> log;
    size_t dir_index = 0;
  };

  LogManager(FileSystem& files, LogManagerConfig config, LogConfig default_log_config, Clock& clock,
             LogConfigLookup config_for);
  Status load_dir(size_t dir_index);
  Status check_descriptor_reserve();
  // Takes the log out of logs_ and deletes its dir / quarantines it.
  Status erase_and_delete(std::map<TopicPartition, Entry>::iterator it);
  Status erase_and_quarantine(std::map<TopicPartition, Entry>::iterator it);
  // A partition dir on disk that no Log holds (a deletion whose rename
  // failed, a create cut short): deleted when it names another topic id or
  // has neither an id nor data; refused otherwise.
  Status clear_dir_in_the_way(const std::filesystem::path& path, const Uuid& topic_id);
  Status write_checkpoints_after_removal();
  Status write_checkpoint(const char* file_name, Offset (Log::*field)() const);
  Status write_per_dir(const char* file_name, const std::vector<OffsetCheckpoint>& per_dir);

  FileSystem& files_;
  LogManagerConfig config_;
  LogConfig default_log_config_;
  Clock& clock_;
  Rng rng_;  // from config_.seed
  LogConfigLookup config_for_;
  std::vector<Dir> dirs_;
  int64_t broker_epoch_ = -1;
  std::map<TopicPartition, Entry> logs_;
  LogCleaner cleaner_;
  HighWatermarkSource hw_source_;
  BlockingExecutor* blocking_ = &inline_blocking_executor();
  OffsetCheckpoint startup_high_watermarks_;
  int64_t last_hw_checkpoint_ms_ = 0;
  int64_t last_recovery_checkpoint_ms_ = 0;
  int64_t last_start_checkpoint_ms_ = 0;
  int64_t last_retention_ms_ = 0;
  int64_t last_producer_expiry_ms_ = 0;
  int64_t last_flush_check_ms_ = 0;
  bool closed_ = false;
  int64_t logs_until_descriptor_check_ = 0;  // see check_descriptor_reserve()
};

// "<topic>-<partition>" -> TopicPartition (topic may contain '-'); nullopt
// for names that are not partition dirs.
std::optional<TopicPartition> parse_partition_dir_name(const std::string& name);

}  // namespace samsa

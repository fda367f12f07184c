#include "storage/log_manager.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "base/log.h"
#include "storage/file_util.h"
#include "storage/partition_metadata.h"

namespace samsa {

namespace fs = std::filesystem;

std::optional<TopicPartition> parse_partition_dir_name(const std::string& name) {
  size_t dash = name.rfind('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 == name.size()) return std::nullopt;
  int32_t partition = -1;
  const char* begin = name.data() + dash + 1;
  const char* end = name.data() + name.size();
  auto [p, ec] = std::from_chars(begin, end, partition);
  if (ec != std::errc() || p != end || partition < 0) return std::nullopt;
  std::string topic = name.substr(0, dash);
  for (char c : topic) {  // Kafka's legal topic characters
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) return std::nullopt;
  }
  return TopicPartition{topic, PartitionId(partition)};
}

LogManager::LogManager(FileSystem& files, LogManagerConfig config, LogConfig default_log_config, Clock& clock,
                       LogConfigLookup config_for)
    : files_(files),
      config_(std::move(config)),
      default_log_config_(default_log_config),
      clock_(clock),
      rng_(config_.seed),
      config_for_(std::move(config_for)),
      cleaner_(config_.cleaner) {
  int64_t now = clock_.monotonic_ms();
  last_recovery_checkpoint_ms_ = last_start_checkpoint_ms_ = last_retention_ms_ = last_flush_check_ms_ = now;
  last_producer_expiry_ms_ = now;
}

LogManager::~LogManager() = default;

Result<std::unique_ptr<LogManager>> LogManager::open(FileSystem& files, LogManagerConfig config,
                                                     LogConfig default_log_config, Clock& clock,
                                                     LogConfigLookup config_for) {
  if (config.log_dirs.empty()) return Error(ErrorKind::kInvalidArgument, "no log.dirs");
  std::unique_ptr<LogManager> m(
      new LogManager(files, std::move(config), default_log_config, clock, std::move(config_for)));
  for (const auto& path : m->config_.log_dirs) m->dirs_.push_back(Dir{path});
  for (size_t i = 0; i < m->dirs_.size(); ++i) RETURN_IF_ERROR(m->load_dir(i));
  return m;
}

namespace {
OffsetCheckpoint read_checkpoint_or_empty(FileSystem& files, const fs::path& file) {
  auto cp = read_offset_checkpoint(files, file);
  if (cp.ok()) return std::move(cp).value();
  LOG_WARN("storage", "ignoring {}: {} (logs in this dir recover from offset 0)", file.string(),
           cp.error().to_string());
  return {};
}
// The clean-shutdown marker's content, as Kafka's CleanShutdownFileHandler.
std::string marker_content(int64_t broker_epoch) {
  return "{\"version\":0,\"brokerEpoch\":" + std::to_string(broker_epoch) + "}";
}

// The broker epoch of a marker; -1 when it holds none (an older, empty
// marker) or cannot be read.
int64_t read_marker_broker_epoch(FileSystem& files, const fs::path& marker) {
  constexpr size_t kMaxMarkerBytes = 256;
  Result<std::string> content = file_util::read_file(files, marker, kMaxMarkerBytes);
  if (!content.ok()) return -1;
  const std::string key = "\"brokerEpoch\":";
  size_t at = content.value().find(key);
  if (at == std::string::npos) return -1;
  try {
    return std::stoll(content.value().substr(at + key.size()));
  } catch (const std::exception&) {
    return -1;
  }
}

}  // namespace

int64_t LogManager::previous_broker_epoch() const {
  int64_t epoch = -1;
  for (size_t i = 0; i < dirs_.size(); ++i) {
    if (!dirs_[i].clean_at_startup || dirs_[i].marker_broker_epoch < 0) return -1;
    if (i > 0 && dirs_[i].marker_broker_epoch != epoch) return -1;
    epoch = dirs_[i].marker_broker_epoch;
  }
  return epoch;
}

Status LogManager::load_dir(size_t dir_index) {
  Dir& dir = dirs_[dir_index];
  RETURN_IF_ERROR(file_util::create_directories_durably(files_, dir.path));
  fs::path marker = dir.path / kCleanShutdownFile;
  ASSIGN_OR_RETURN(dir.clean_at_startup, files_.exists(marker));
  if (dir.clean_at_startup) dir.marker_broker_epoch = read_marker_broker_epoch(files_, marker);
  OffsetCheckpoint recovery = read_checkpoint_or_empty(files_, dir.path / kRecoveryPointCheckpointFile);
  OffsetCheckpoint starts = read_checkpoint_or_empty(files_, dir.path / kLogStartOffsetCheckpointFile);
  // A lost cleaner checkpoint only means the next pass re-reads clean data.
  OffsetCheckpoint cleaned = read_checkpoint_or_empty(files_, dir.path / kCleanerOffsetCheckpointFile);
  OffsetCheckpoint cleaner_offsets = cleaner_.checkpoints();
  OffsetCheckpoint high_watermarks = read_checkpoint_or_empty(files_, dir.path / kReplicationOffsetCheckpointFile);
  std::vector<fs::path> children;  // sorted: list() returns names in order
  ASSIGN_OR_RETURN(std::vector<DirEntry> entries, files_.list(dir.path));
  for (const DirEntry& entry : entries) {
    if (entry.is_directory) children.push_back(dir.path / entry.name);
  }
  for (const auto& child : children) {
    std::string name = child.filename().string();
    if (name.size() > kDeleteDirSuffix.size() && name.ends_with(kDeleteDirSuffix)) {
      // A deletion renamed it (durably) and crashed before removing it.
      LOG_INFO("storage", "removing deleted partition dir {}", child.string());
      Status removed = files_.remove_all(child);
      if (!removed.ok()) LOG_WARN("storage", "removing {}: {}", child.string(), removed.error().to_string());
      continue;
    }
    if (name.size() > kStrayDirSuffix.size() && name.ends_with(kStrayDirSuffix)) {
      LOG_WARN("storage", "keeping quarantined partition dir {} (never served; remove it when not needed)",
               child.string());
      continue;
    }
    if (name.starts_with(kMetadataTopicPrefix)) continue;  // the metadata log has its own owner
    auto tp = parse_partition_dir_name(name);
    if (!tp) {
      LOG_WARN("storage", "ignoring {}: not a partition directory", child.string());
      continue;
    }
    if (logs_.count(*tp)) return Error(ErrorKind::kAlreadyExists, "partition " + name + " in two log dirs");
    RecoveryOptions opts;
    opts.had_clean_shutdown = dir.clean_at_startup;
    if (auto it = recovery.find(*tp); it != recovery.end()) opts.recovery_point = it->second;
    if (auto it = starts.find(*tp); it != starts.end()) opts.log_start_offset = it->second;
    LogConfig cfg = config_for_ ? config_for_(*tp) : default_log_config_;
    ASSIGN_OR_RETURN(std::unique_ptr<Log> log, Log::open(files_, child, *tp, cfg, clock_, opts, rng_.next_u64()));
    if (auto it = cleaned.find(*tp); it != cleaned.end()) cleaner_offsets[*tp] = it->second;
    if (auto it = high_watermarks.find(*tp); it != high_watermarks.end()) {
      startup_high_watermarks_[*tp] = std::min(it->second, log->log_end_offset());
    }
    logs_[*tp] = Entry{std::move(log), dir_index};
    ++dir.log_count;
  }
  cleaner_.set_checkpoints(cleaner_offsets);
  // From here on a crash must lead to recovery.
  if (dir.clean_at_startup) {
    RETURN_IF_ERROR(files_.remove(marker));
    RETURN_IF_ERROR(files_.sync_dir(dir.path));
  }
  LOG_INFO("storage", "log dir {}: {} partitions ({} shutdown)", dir.path.string(), dir.log_count,
           dir.clean_at_startup ? "clean" : "unclean");
  return ok_status();
}

int64_t LogManager::descriptor_reserve(int64_t limit) { return std::clamp<int64_t>(limit / 4, 16, 1024); }

bool LogManager::leaves_descriptor_reserve(const FileSystem::DescriptorUsage& usage) {
  return usage.limit - usage.open - kDescriptorsPerNewLog >= descriptor_reserve(usage.limit);
}

// Counting the open descriptors costs a listing of /proc/self/fd, so it is
// done again only once half the headroom seen last time may have been used:
// creating n logs lists the descriptors O(log n) times, not n times.
Status LogManager::check_descriptor_reserve() {
  if (logs_until_descriptor_check_ > 0) {
    --logs_until_descriptor_check_;
    return ok_status();
  }
  auto usage = files_.descriptor_usage();
  if (!usage) return ok_status();  // unknown: open and see
  if (!leaves_descriptor_reserve(*usage)) {
    return Error(ErrorKind::kIo, "too many open files: " + std::to_string(usage->open) + " of " +
                                     std::to_string(usage->limit) + " descriptors in use, " +
                                     std::to_string(descriptor_reserve(usage->limit)) + " kept in reserve");
  }
  int64_t headroom = usage->limit - usage->open - descriptor_reserve(usage->limit);
  logs_until_descriptor_check_ = headroom / (2 * kDescriptorsPerNewLog);
  return ok_status();
}

Result<Log*> LogManager::create_log(const TopicPartition& tp, const LogConfig& config, const Uuid& topic_id) {
  if (closed_) return Error(ErrorKind::kClosed, "log manager closed");
  if (auto it = logs_.find(tp); it != logs_.end()) {
    Log* log = it->second.log.get();
    if (topic_id.is_zero() || log->topic_id() == topic_id) return log;
    if (log->topic_id()) {
      return Error(ErrorKind::kAlreadyExists, fmt::format("{} holds topic id {}, not {}", log->dir().string(),
                                                          log->topic_id()->to_string(), topic_id.to_string()));
    }
    LOG_WARN("storage", "{}: no partition.metadata; adopting it for topic id {} (the metadata assigns {} here)",
             log->dir().string(), topic_id.to_string(), tp.to_string());
    // Served either way, as before partition.metadata existed: a full disk
    // must not take down a partition that only lacks the file.
    Status written = log->assign_topic_id(topic_id);
    if (!written.ok()) {
      LOG_WARN("storage", "{}: writing partition.metadata: {} (retried at the next start)", log->dir().string(),
               written.error().to_string());
    }
    return log;
  }
  RETURN_IF_ERROR(check_descriptor_reserve());
  size_t best = 0;
  for (size_t i = 1; i < dirs_.size(); ++i) {
    if (dirs_[i].log_count < dirs_[best].log_count) best = i;
  }
  fs::path path = dirs_[best].path / tp.to_string();
  ASSIGN_OR_RETURN(bool in_the_way, files_.exists(path));
  if (in_the_way) RETURN_IF_ERROR(clear_dir_in_the_way(path, topic_id));
  ASSIGN_OR_RETURN(std::unique_ptr<Log> log, Log::open(files_, path, tp, config, clock_, RecoveryOptions{}, rng_.next_u64()));
  // partition.metadata is durable before the first append, unless writing
  // it failed (a full disk): the log is served anyway, as before the file
  // existed; at the next start such a dir is adopted if still assigned
  // here, and quarantined (never served) if it holds data but is not.
  if (!topic_id.is_zero()) {
    Status written = log->assign_topic_id(topic_id);
    if (!written.ok()) {
      LOG_WARN("storage", "{}: writing partition.metadata: {}", path.string(), written.error().to_string());
    }
  }
  log->set_blocking_executor(*blocking_);
  RETURN_IF_ERROR(files_.sync_dir(dirs_[best].path));
  Log* raw = log.get();
  logs_[tp] = Entry{std::move(log), best};
  ++dirs_[best].log_count;
  LOG_INFO("storage", "created log {} in {}", tp.to_string(), dirs_[best].path.string());
  return raw;
}

namespace {
// Whether a partition dir holds any record bytes (a non-empty .log file);
// an unreadable dir or file is assumed to.
bool holds_data(FileSystem& files, const fs::path& dir) {
  auto entries = files.list(dir);
  if (!entries.ok()) return true;
  for (const DirEntry& e : *entries) {
    if (e.is_directory || fs::path(e.name).extension() != ".log") continue;
    auto file = files.open(dir / e.name, OpenMode::kRead);
    if (!file.ok()) return true;
    auto size = (*file)->size();
    if (!size.ok() || *size > 0) return true;
  }
  return false;
}
}  // namespace

Status LogManager::clear_dir_in_the_way(const fs::path& path, const Uuid& topic_id) {
  auto id = read_partition_metadata(files_, path);
  if (id.ok() && *id && **id != topic_id) {
    LOG_WARN("storage", "{}: left by an interrupted deletion of topic id {}: deleting it", path.string(),
             (*id)->to_string());
    return delete_partition_dir(files_, path, rng_);
  }
  if (id.ok() && !*id && !holds_data(files_, path)) {  // a create that failed half-way (ENOSPC)
    LOG_WARN("storage", "{}: empty, without partition.metadata: deleting it", path.string());
    return delete_partition_dir(files_, path, rng_);
  }
  return Error(ErrorKind::kAlreadyExists, path.string() + " exists and is not a log of another topic id: move it away");
}

Log* LogManager::get(const TopicPartition& tp) const {
  auto it = logs_.find(tp);
  return it == logs_.end() ? nullptr : it->second.log.get();
}

Status LogManager::erase_and_delete(std::map<TopicPartition, Entry>::iterator it) {
  TopicPartition tp = it->first;
  cleaner_.forget(tp);
  startup_high_watermarks_.erase(tp);
  Status st = it->second.log->delete_dir();
  --dirs_[it->second.dir_index].log_count;
  logs_.erase(it);
  if (st.ok()) {
    LOG_INFO("storage", "deleted log {}", tp.to_string());
  } else {
    LOG_ERROR("storage", "deleting log {}: {}", tp.to_string(), st.error().to_string());
  }
  return st;
}

// Closed (finalized, fsynced) first, so that the kept copy is whole. Out
// of logs_ even when the rename fails: the dir then stays under its name,
// which create_log refuses (clear_dir_in_the_way) and the next start
// retries.
Status LogManager::erase_and_quarantine(std::map<TopicPartition, Entry>::iterator it) {
  Log& log = *it->second.log;
  fs::path dir = log.dir();
  fs::path stray = renamed_partition_dir(dir, kStrayDirSuffix, rng_);
  Status st = log.close();
  cleaner_.forget(it->first);
  startup_high_watermarks_.erase(it->first);
  --dirs_[it->second.dir_index].log_count;
  logs_.erase(it);
  if (st.ok()) st = files_.rename(dir, stray);
  if (st.ok()) st = files_.sync_dir(file_util::parent_dir(dir));
  if (!st.ok()) {
    LOG_ERROR("storage", "quarantining {}: {}", dir.string(), st.error().to_string());
    return st;
  }
  LOG_WARN("storage", "{}: data without partition.metadata, not assigned here: kept as {}, never served",
           dir.string(), stray.string());
  return ok_status();
}

Status LogManager::remove_stray_logs(const std::map<TopicPartition, Uuid>& assigned) {
  Status first;
  bool removed = false;
  for (auto it = logs_.begin(); it != logs_.end();) {
    auto next = std::next(it);
    const Log& log = *it->second.log;
    auto want = assigned.find(it->first);
    bool listed = want != assigned.end();
    if (listed && (!log.topic_id() || *log.topic_id() == want->second)) {
      it = next;
      continue;
    }
    if (log.topic_id()) {
      LOG_INFO("storage", "{}: topic id {} is not assigned here{}: deleting it", log.dir().string(),
               log.topic_id()->to_string(), listed ? " (the topic was re-created under a new id)" : "");
    }
    Status st = log.topic_id() || log.size_bytes() == 0 ? erase_and_delete(it) : erase_and_quarantine(it);
    removed = true;
    if (!st.ok() && first.ok()) first = st;
    it = next;
  }
  if (removed) {
    Status cp = write_checkpoints_after_removal();
    if (!cp.ok() && first.ok()) first = cp;
  }
  return first;
}

Status LogManager::delete_log(const TopicPartition& tp) {
  auto it = logs_.find(tp);
  if (it == logs_.end()) return Error(ErrorKind::kNotFound, "no log for " + tp.to_string());
  Status st = erase_and_delete(it);
  Status cp = write_checkpoints_after_removal();
  return st.ok() ? cp : st;
}

// As Kafka after a deletion: the checkpoints lose the removed partitions
// now, not at the next interval, so that a topic re-created under the same
// name does not inherit the old one's log start offset or recovery point
// at the next start.
Status LogManager::write_checkpoints_after_removal() {
  Status st = write_recovery_point_checkpoints();
  if (st.ok()) st = write_log_start_offset_checkpoints();
  if (st.ok()) st = write_cleaner_checkpoints();
  if (st.ok()) st = write_replication_offset_checkpoints();
  return st;
}

void LogManager::set_blocking_executor(BlockingExecutor& executor) {
  blocking_ = &executor;
  for (auto& [tp, e] : logs_) e.log->set_blocking_executor(executor);
}

std::vector<Log*> LogManager::all() const {
  std::vector<Log*> out;
  out.reserve(logs_.size());
  for (const auto& [tp, e] : logs_) out.push_back(e.log.get());
  return out;
}

Status LogManager::flush_all() {
  Status first;
  for (auto& [tp, e] : logs_) {
    Status st = e.log->flush();
    if (!st.ok() && first.ok()) first = st;
  }
  return first;
}

std::optional<Offset> LogManager::checkpointed_high_watermark(const TopicPartition& tp) const {
  auto it = startup_high_watermarks_.find(tp);
  return it == startup_high_watermarks_.end() ? std::nullopt : std::optional<Offset>(it->second);
}

Status LogManager::write_replication_offset_checkpoints() {
  if (!hw_source_) return ok_status();
  std::vector<OffsetCheckpoint> per_dir(dirs_.size());
  for (const auto& [tp, e] : logs_) {
    if (auto hw = hw_source_(tp)) per_dir[e.dir_index][tp] = *hw;
  }
  return write_per_dir(kReplicationOffsetCheckpointFile, per_dir);
}

Status LogManager::write_cleaner_checkpoints() {
  std::vector<OffsetCheckpoint> per_dir(dirs_.size());
  for (const auto& [tp, offset] : cleaner_.checkpoints()) {
    if (auto it = logs_.find(tp); it != logs_.end()) per_dir[it->second.dir_index][tp] = offset;
  }
  return write_per_dir(kCleanerOffsetCheckpointFile, per_dir);
}

Status LogManager::write_checkpoint(const char* file_name, Offset (Log::*field)() const) {
  std::vector<OffsetCheckpoint> per_dir(dirs_.size());
  for (const auto& [tp, e] : logs_) per_dir[e.dir_index][tp] = (e.log.get()->*field)();
  return write_per_dir(file_name, per_dir);
}

// Each file is written (write, fsync, rename, fsync of the dir) by the
// blocking executor, with its own copy of the entries: see
// io/thread_blocking_executor.h for why not on this thread. The status
// returned is that of an inline executor (which has reported already); a
// background write's error is logged.
Status LogManager::write_per_dir(const char* file_name, const std::vector<OffsetCheckpoint>& per_dir) {
  auto first = std::make_shared<Status>();
  for (size_t i = 0; i < dirs_.size(); ++i) {
    fs::path path = dirs_[i].path / file_name;
    blocking_->submit([files = &files_, path, entries = per_dir[i]] {
                        return write_offset_checkpoint(*files, path, entries);
                      },
                      [path, first](Status st) {
                           if (st.ok()) return;
                           LOG_ERROR("storage", "writing {}: {}", path.string(), st.error().to_string());
                           if (first->ok()) *first = st;
                         });
  }
  return *first;
}

Status LogManager::write_recovery_point_checkpoints() {
  return write_checkpoint(kRecoveryPointCheckpointFile, &Log::recovery_point);
}

Status LogManager::write_log_start_offset_checkpoints() {
  return write_checkpoint(kLogStartOffsetCheckpointFile, &Log::log_start_offset);
}

Status LogManager::tick(int64_t now_ms) {
  if (closed_) return ok_status();
  Status first;
  auto note = [&first](Status st) {
    if (!st.ok() && first.ok()) first = st;
  };
  if (config_.flush_check_interval_ms == kInt64Max || now_ms - last_flush_check_ms_ >= config_.flush_check_interval_ms) {
    // flush.ms is per log; with the default (never) this is a cheap no-op.
    last_flush_check_ms_ = now_ms;
    int64_t mono = clock_.monotonic_ms();  // Log::last_flush_ms() is monotonic
    for (auto& [tp, e] : logs_) note(e.log->maybe_flush(mono));
  }
  for (auto& [tp, e] : logs_) note(e.log->delete_pending_files(clock_.monotonic_ms()));
  if (now_ms - last_retention_ms_ >= config_.retention_check_interval_ms) {
    last_retention_ms_ = now_ms;
    int64_t wall = clock_.wall_ms();
    for (auto& [tp, e] : logs_) {
      auto n = e.log->delete_old_segments(wall);
      if (!n.ok()) note(n.error());
    }
  }
  if (now_ms - last_producer_expiry_ms_ >= config_.producer_id_expiration_check_interval_ms) {
    last_producer_expiry_ms_ = now_ms;
    int64_t wall = clock_.wall_ms();  // producer state keeps record timestamps
    for (auto& [tp, e] : logs_) e.log->expire_producers(wall, config_.producer_id_expiration_ms);
  }
  if (cleaner_.busy() || config_.cleaner.enable) {
    cleaner_.step(all(), [this](const TopicPartition& tp) { return get(tp); }, clock_.wall_ms(),
                  clock_.monotonic_ms());
  }
  if (hw_source_ && now_ms - last_hw_checkpoint_ms_ >= config_.high_watermark_checkpoint_interval_ms) {
    last_hw_checkpoint_ms_ = now_ms;
    note(write_replication_offset_checkpoints());
  }
  if (now_ms - last_recovery_checkpoint_ms_ >= config_.recovery_point_checkpoint_interval_ms) {
    last_recovery_checkpoint_ms_ = now_ms;
    note(write_recovery_point_checkpoints());
    note(write_cleaner_checkpoints());
  }
  if (now_ms - last_start_checkpoint_ms_ >= config_.log_start_offset_checkpoint_interval_ms) {
    last_start_checkpoint_ms_ = now_ms;
    note(write_log_start_offset_checkpoints());
  }
  return first;
}

Status LogManager::close() {
  if (closed_) return ok_status();
  // The final checkpoints and the clean-shutdown marker are written here,
  // in order, after every log's flush: not by a worker that may lag.
  ASSERT(blocking_ == &inline_blocking_executor());
  closed_ = true;
  cleaner_.abort();
  std::vector<bool> dir_ok(dirs_.size(), true);
  Status first;
  for (auto& [tp, e] : logs_) {
    Status st = e.log->close();
    if (!st.ok()) {
      LOG_ERROR("storage", "closing {}: {}", tp.to_string(), st.error().to_string());
      dir_ok[e.dir_index] = false;
      if (first.ok()) first = st;
    }
  }
  Status cp = write_recovery_point_checkpoints();
  if (cp.ok()) cp = write_log_start_offset_checkpoints();
  if (cp.ok()) cp = write_cleaner_checkpoints();
  if (cp.ok()) cp = write_replication_offset_checkpoints();
  if (!cp.ok()) {
    dir_ok.assign(dirs_.size(), false);
    if (first.ok()) first = cp;
  }
  for (size_t i = 0; i < dirs_.size(); ++i) {
    if (!dir_ok[i]) continue;  // next start recovers this dir
    Status st = file_util::write_file_atomic(files_, dirs_[i].path / kCleanShutdownFile, marker_content(broker_epoch_));
    if (!st.ok() && first.ok()) first = st;
  }
  logs_.clear();
  return first;
}

}  // namespace samsa

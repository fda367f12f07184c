#include "controller/raft_log_storage.h"

#include <fmt/format.h>

#include <charconv>

#include "base/assert.h"
#include "base/log.h"
#include "controller/quorum_state.h"
#include "model/record.h"
#include "model/record_batch.h"
#include "model/record_batch_builder.h"
#include "storage/file_util.h"
#include "storage/log_batches.h"

namespace samsa {
namespace {

namespace fs = std::filesystem;
using raft::Entry;
using raft::EntryKind;
using raft::LogIndex;
using raft::Term;

const TopicPartition kMetadataPartition{"__cluster_metadata", PartitionId(0)};
constexpr int32_t kReadChunkBytes = 1 << 20;
// KRaft's largest batch (KafkaRaftClient.MAX_BATCH_SIZE_BYTES, 8 MiB): one entry.
constexpr int32_t kMaxEntryBatchBytes = 8 * 1024 * 1024;
// A snapshot file is read whole at start.
constexpr size_t kMaxSnapshotFileBytes = size_t(1) << 30;
constexpr std::string_view kSnapshotSuffix = ".checkpoint";
// Kafka's control record key: version int16 0, type int16 2 (LEADER_CHANGE).
constexpr uint8_t kLeaderChangeKey[] = {0, 0, 0, 2};

LogConfig raft_log_config() {
  LogConfig config;
  config.segment_bytes = 64 * 1024 * 1024;
  config.retention_ms = -1;         // only snapshots trim the log
  config.max_message_bytes = kMaxEntryBatchBytes;
  config.file_delete_delay_ms = 0;  // no reader holds a region of a compacted segment
  config.segment_index_bytes = 1024 * 1024;  // ~1 entry in 58 is indexed: plenty for a 64 MiB segment
  return config;
}

Error corrupt(const fs::path& where, const std::string& what) {
  return Error(ErrorKind::kCorrupt, fmt::format("{}: {}", where.string(), what));
}

LeaderEpoch epoch_of(Term term) {
  ASSERT_MSG(term.value() >= 0 && term.value() <= INT32_MAX, "a Raft term beyond KRaft's int32 epoch");
  return LeaderEpoch(int32_t(term.value()));
}

// One entry as one batch (see the header for why one).
Status encode_entry(const Entry& e, int64_t now_ms, Bytes& out) {
  RecordBatchOptions options;
  options.base_offset = Offset(e.index.value() - 1);
  options.partition_leader_epoch = epoch_of(e.term);
  options.control = e.kind == EntryKind::kLeaderChange;
  RecordBatchBuilder builder(options);
  std::optional<ByteView> key;
  if (options.control) key = ByteView(kLeaderChangeKey, sizeof kLeaderChangeKey);
  builder.add(now_ms, key, ByteView(e.data));
  return builder.build_to(out);
}

// The one record of a batch written by encode_entry (or a snapshot file).
Result<Entry> decode_entry(const BatchRef& batch, const fs::path& where) {
  Entry e;
  e.term = Term(batch.header.partition_leader_epoch().value());
  if (e.term.value() < 0) return corrupt(where, "a batch without a leader epoch");
  ASSIGN_OR_RETURN(RecordIterator records, RecordIterator::open(batch.bytes, kMaxEntryBatchBytes));
  Record record;
  if (!records.next(record)) {
    RETURN_IF_ERROR(records.status());
    return corrupt(where, "an empty batch");
  }
  if (records.records_left() != 0) return corrupt(where, "a batch of more than one entry");
  if (!record.value) return corrupt(where, "an entry without a value");
  if (batch.header.is_control()) {
    bool leader_change = record.key && record.key->size() == sizeof kLeaderChangeKey &&
                         std::equal(record.key->begin(), record.key->end(), kLeaderChangeKey);
    if (!leader_change) return corrupt(where, "a control record that is not a LeaderChange");
    e.kind = EntryKind::kLeaderChange;
  }
  e.index = LogIndex(record.offset(batch.header).value() + 1);
  e.data.assign(record.value->begin(), record.value->end());
  return e;
}

// "<20 digits>-<10 digits>.checkpoint" -> (index, term).
std::optional<std::pair<LogIndex, Term>> parse_snapshot_name(std::string_view name) {
  if (name.size() != 20 + 1 + 10 + kSnapshotSuffix.size() || name[20] != '-' ||
      name.substr(31) != kSnapshotSuffix) {
    return std::nullopt;
  }
  int64_t index = 0;
  int64_t term = 0;
  auto a = std::from_chars(name.data(), name.data() + 20, index);
  auto b = std::from_chars(name.data() + 21, name.data() + 31, term);
  if (a.ec != std::errc() || a.ptr != name.data() + 20 || b.ec != std::errc() || b.ptr != name.data() + 31) {
    return std::nullopt;
  }
  return std::pair{LogIndex(index), Term(term)};
}

}  // namespace

fs::path RaftLogStorage::snapshot_name(LogIndex index, Term term) {
  return fmt::format("{:020}-{:010}{}", index.value(), term.value(), kSnapshotSuffix);
}

RaftLogStorage::RaftLogStorage(FileSystem& files, fs::path dir, Clock& clock, std::unique_ptr<Log> log)
    : files_(files), dir_(std::move(dir)), clock_(clock), log_(std::move(log)) {}

RaftLogStorage::~RaftLogStorage() = default;

Result<std::unique_ptr<RaftLogStorage>> RaftLogStorage::open(FileSystem& files, fs::path dir, Clock& clock) {
  // The dir's own name must be durable before anything in it is promised
  // (Log::open creates it but leaves its parent unsynced).
  ASSIGN_OR_RETURN(bool existed, files.exists(dir));
  if (!existed) {
    RETURN_IF_ERROR(files.create_directories(dir));
    RETURN_IF_ERROR(files.sync_dir(file_util::parent_dir(dir)));
  }
  ASSIGN_OR_RETURN(auto log, Log::open(files, dir, kMetadataPartition, raft_log_config(), clock, RecoveryOptions{}));
  std::unique_ptr<RaftLogStorage> storage(new RaftLogStorage(files, std::move(dir), clock, std::move(log)));
  RETURN_IF_ERROR(storage->recover());
  return storage;
}

Result<raft::PersistentState> RaftLogStorage::load() {
  if (!recovered_) return Error(ErrorKind::kInvalidArgument, dir_.string() + ": load() twice");
  raft::PersistentState state = std::move(*recovered_);
  recovered_.reset();
  return state;
}

Result<std::vector<Entry>> RaftLogStorage::read_entries() {
  std::vector<Entry> entries;
  ASSIGN_OR_RETURN(Offset end, for_each_batch(*log_, kReadChunkBytes, [&](const BatchRef& batch) -> Status {
    ASSIGN_OR_RETURN(Entry e, decode_entry(batch, dir_));
    if (!entries.empty() && e.index != entries.back().index + 1) return corrupt(dir_, "a gap in the entries");
    if (!entries.empty() && e.term < entries.back().term) return corrupt(dir_, "a term that goes backwards");
    entries.push_back(std::move(e));
    return ok_status();
  }));
  if (end < log_->log_end_offset()) return corrupt(dir_, fmt::format("no whole batch at offset {}", end.value()));
  return entries;
}

Result<raft::SnapshotPtr> RaftLogStorage::read_latest_snapshot() {
  ASSIGN_OR_RETURN(std::vector<DirEntry> names, files_.list(dir_));
  std::optional<std::pair<LogIndex, Term>> latest;
  for (const DirEntry& entry : names) {
    auto id = entry.is_directory ? std::nullopt : parse_snapshot_name(entry.name);
    if (id && (!latest || id->first > latest->first)) latest = id;
  }
  if (!latest) return raft::SnapshotPtr();
  fs::path path = dir_ / snapshot_name(latest->first, latest->second);
  ASSIGN_OR_RETURN(std::string content, file_util::read_file(files_, path, kMaxSnapshotFileBytes));
  ByteView bytes(reinterpret_cast<const uint8_t*>(content.data()), content.size());
  BatchIterator batches(bytes);
  auto batch = batches.next();
  if (!batch || batches.position() != bytes.size()) return corrupt(path, "not exactly one whole batch");
  if (compute_batch_crc(batch->bytes) != batch->header.crc()) return corrupt(path, "CRC mismatch");
  ASSIGN_OR_RETURN(Entry e, decode_entry(*batch, path));
  if (e.index != latest->first || e.term != latest->second) return corrupt(path, "its batch does not match its name");
  auto snapshot = std::make_shared<raft::Snapshot>();
  snapshot->index = e.index;
  snapshot->term = e.term;
  snapshot->data = std::move(e.data);
  return raft::SnapshotPtr(std::move(snapshot));
}

Status RaftLogStorage::recover() {
  ASSIGN_OR_RETURN(raft::SnapshotPtr snapshot, read_latest_snapshot());
  ASSIGN_OR_RETURN(std::vector<Entry> entries, read_entries());
  LogIndex first = entries.empty() ? LogIndex(log_->log_end_offset().value() + 1) : entries.front().index;
  if (snapshot) {
    // ready.h's snapshot rule, again: the log may still hold what an
    // interrupted install was about to discard.
    bool keep = first == snapshot->index + 1;  // the log restarts right after it
    for (const Entry& e : entries) {
      if (e.index == snapshot->index) keep = e.term == snapshot->term;
    }
    if (keep && first <= snapshot->index + 1) {
      std::erase_if(entries, [&](const Entry& e) { return e.index <= snapshot->index; });
      if (log_->log_start_offset().value() < snapshot->index.value()) {
        RETURN_IF_ERROR(log_->advance_log_start_offset(Offset(snapshot->index.value())));
      }
    } else {
      LOG_INFO("raft", "{}: discarding the log after snapshot {} (term {}): it does not extend it", dir_.string(),
               snapshot->index.value(), snapshot->term.value());
      entries.clear();
      RETURN_IF_ERROR(log_->truncate_fully_and_start_at(Offset(snapshot->index.value())));
      RETURN_IF_ERROR(log_->flush());
      RETURN_IF_ERROR(files_.sync_dir(dir_));
    }
    RETURN_IF_ERROR(remove_snapshots_below(snapshot->index));
  } else if (first != LogIndex(1)) {
    return corrupt(dir_, fmt::format("the entries start at {} and there is no snapshot", first.value()));
  }

  raft::HardState hard_state;
  auto text = file_util::read_file(files_, dir_ / kQuorumStateFileName, kMaxQuorumStateBytes);
  if (text.ok()) {
    ASSIGN_OR_RETURN(hard_state, decode_quorum_state(*text));
  } else if (text.error().kind() != ErrorKind::kNotFound) {
    return text.error();
  }
  // The commit is a hint (the leader tells it again); never past what is stored.
  LogIndex snapshot_index = snapshot ? snapshot->index : raft::kNoIndex;
  LogIndex last = entries.empty() ? snapshot_index : entries.back().index;
  hard_state.commit = std::clamp(hard_state.commit, snapshot_index, last);

  snapshot_ = snapshot;
  first_index_ = snapshot_index + 1;
  terms_.clear();
  for (const Entry& e : entries) terms_.push_back(e.term);
  hard_state_ = hard_state;
  recovered_ = raft::PersistentState{hard_state, snapshot, std::move(entries)};
  LOG_INFO("raft", "{}: recovered term {}, vote {}, snapshot {}, entries {}..{}", dir_.string(),
           hard_state.term.value(), hard_state.vote.value(), snapshot_index.value(), first_index_.value(),
           last_index().value());
  return ok_status();
}

Status RaftLogStorage::remove_snapshots_below(LogIndex index) {
  ASSIGN_OR_RETURN(std::vector<DirEntry> names, files_.list(dir_));
  for (const DirEntry& entry : names) {
    auto id = entry.is_directory ? std::nullopt : parse_snapshot_name(entry.name);
    if (id && id->first < index) {
      RETURN_IF_ERROR(files_.remove(dir_ / entry.name));
      dir_dirty_ = true;
    }
  }
  return ok_status();
}

std::optional<Term> RaftLogStorage::stored_term(LogIndex index) const {
  if (snapshot_ && index == snapshot_->index) return snapshot_->term;
  if (index < first_index_ || index > last_index()) return std::nullopt;
  return terms_[size_t(index - first_index_)];
}

Status RaftLogStorage::install_snapshot(const raft::SnapshotPtr& snapshot) {
  ASSERT(snapshot && snapshot->index > raft::kNoIndex);
  if (snapshot_ && snapshot->index <= snapshot_->index) return ok_status();
  const bool keep = stored_term(snapshot->index) == snapshot->term;
  // The snapshot first: once it is durable, load() finishes the rest.
  Entry e{snapshot->term, snapshot->index, EntryKind::kNormal, snapshot->data};
  Bytes file;
  RETURN_IF_ERROR(encode_entry(e, clock_.wall_ms(), file));
  std::string_view content(reinterpret_cast<const char*>(file.data()), file.size());
  RETURN_IF_ERROR(file_util::write_file_atomic(files_, dir_ / snapshot_name(snapshot->index, snapshot->term), content));
  const Offset end(snapshot->index.value());
  if (keep) {  // a local compaction: forget the prefix
    terms_.erase(terms_.begin(), terms_.begin() + (snapshot->index - first_index_) + 1);
    RETURN_IF_ERROR(log_->advance_log_start_offset(end));
    ASSIGN_OR_RETURN(int deleted, log_->delete_old_segments(clock_.wall_ms()));
    if (deleted > 0) {
      RETURN_IF_ERROR(log_->delete_pending_files(clock_.monotonic_ms()));
      dir_dirty_ = true;
    }
  } else {  // the leader's snapshot replaces a log that does not extend to it
    terms_.clear();
    RETURN_IF_ERROR(log_->truncate_fully_and_start_at(end));
    dir_dirty_ = true;
  }
  first_index_ = snapshot->index + 1;
  snapshot_ = snapshot;
  return remove_snapshots_below(snapshot->index);
}

Status RaftLogStorage::append(std::span<const Entry> entries) {
  ASSERT(!entries.empty());
  const LogIndex first = entries.front().index;
  ASSERT_MSG(first >= first_index_ && first <= last_index() + 1, "entries leave a gap in the stored log");
  if (first <= last_index()) {
    RETURN_IF_ERROR(log_->truncate_to(Offset(first.value() - 1)));
    terms_.resize(size_t(first - first_index_));
    dir_dirty_ = true;  // truncate_to may have removed whole segments
  }
  const int64_t now = clock_.wall_ms();
  size_t i = 0;
  while (i < entries.size()) {  // one Log::append per run of one term
    Bytes batches;
    size_t j = i;
    for (; j < entries.size() && entries[j].term == entries[i].term; ++j) {
      ASSERT(entries[j].index == first + int64_t(j));
      RETURN_IF_ERROR(encode_entry(entries[j], now, batches));
    }
    ASSIGN_OR_RETURN(AppendResult appended, log_->append(batches.data(), batches.size(), epoch_of(entries[i].term)));
    ASSERT_MSG(appended.first_offset.value() == entries[i].index.value() - 1, "the log assigned another offset");
    for (size_t k = i; k < j; ++k) terms_.push_back(entries[k].term);
    i = j;
  }
  return ok_status();
}

Status RaftLogStorage::save_hard_state(const raft::HardState& state) {
  pending_hard_state_ = state;
  return ok_status();
}

Status RaftLogStorage::sync() {
  RETURN_IF_ERROR(log_->flush());
  if (dir_dirty_) {
    RETURN_IF_ERROR(files_.sync_dir(dir_));
    dir_dirty_ = false;
  }
  // After the entries: a commit index on disk never points past them.
  if (pending_hard_state_ && *pending_hard_state_ != hard_state_) {
    RETURN_IF_ERROR(
        file_util::write_file_atomic(files_, dir_ / kQuorumStateFileName, encode_quorum_state(*pending_hard_state_)));
    hard_state_ = *pending_hard_state_;
  }
  pending_hard_state_.reset();
  return ok_status();
}

Status RaftLogStorage::close() { return log_->close(); }

}  // namespace samsa

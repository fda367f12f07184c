#pragma once
// RaftLogStorage: a RaftNode's durable state (raft/raft_storage.h) in the
// metadata log dir, `<metadata.log.dir>/__cluster_metadata-0/`, through a
// FileSystem (docs/formats/metadata-log.md, "The Raft quorum's files"):
//
// - entries: the dir is an ordinary storage Log (one log implementation):
//   entry i is the record at offset i-1, alone in its batch, the batch's
//   partitionLeaderEpoch = the entry's term (as KRaft's __cluster_metadata);
//   a LeaderChange entry is a control batch with Kafka's LeaderChange key
//   (version 0, type 2). One entry per batch because Raft truncates at any
//   index and a Log truncates whole batches.
// - the snapshot: `<end offset 20 digits>-<epoch 10 digits>.checkpoint`
//   (KIP-630's name; end offset = the snapshot's index), one batch whose one
//   record holds the state machine's bytes, written with write_file_atomic;
//   older ones are removed once the new one is durable.
// - the hard state: `quorum-state` (controller/quorum_state.h), written with
//   write_file_atomic in sync(), after the entries are fsynced, so a commit
//   index on disk never points past the entries on disk.
//
// sync() = fsync of the log (and its dir), then the quorum-state if it
// changed. load() applies ready.h's snapshot rule again to what it finds, so
// a crash between the snapshot file and the log's truncation recovers as if
// the truncation had happened.
//
// Loop-thread only; the FileSystem and Clock must outlive it.

#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "base/clock.h"
#include "io/file_system.h"
#include "raft/raft_storage.h"
#include "storage/log.h"

namespace samsa {

class RaftLogStorage final : public raft::RaftStorage {
 public:
  // Opens (creating it if needed) the dir and recovers it; load() returns
  // what was recovered.
  static Result<std::unique_ptr<RaftLogStorage>> open(FileSystem& files, std::filesystem::path dir, Clock& clock);
  ~RaftLogStorage() override;

  Result<raft::PersistentState> load() override;
  Status install_snapshot(const raft::SnapshotPtr& snapshot) override;
  Status append(std::span<const raft::Entry> entries) override;
  Status save_hard_state(const raft::HardState& state) override;
  Status sync() override;

  // Clean close of the log (final indexes, everything fsynced).
  Status close();

  const std::filesystem::path& dir() const { return dir_; }
  // The first and last stored entry indexes (first > last: no entries).
  raft::LogIndex first_index() const { return first_index_; }
  raft::LogIndex last_index() const { return first_index_ + int64_t(terms_.size()) - 1; }
  static std::filesystem::path snapshot_name(raft::LogIndex index, raft::Term term);

 private:
  RaftLogStorage(FileSystem& files, std::filesystem::path dir, Clock& clock, std::unique_ptr<Log> log);
  Status recover();
  Result<std::vector<raft::Entry>> read_entries();
  Result<raft::SnapshotPtr> read_latest_snapshot();
  Status remove_snapshots_below(raft::LogIndex index);
  std::optional<raft::Term> stored_term(raft::LogIndex index) const;

  FileSystem& files_;
  std::filesystem::path dir_;
  Clock& clock_;
  std::unique_ptr<Log> log_;
  raft::SnapshotPtr snapshot_;
  raft::LogIndex first_index_{1};   // index of terms_[0]
  std::vector<raft::Term> terms_;   // term of every stored entry
  raft::HardState hard_state_;      // as of the last sync()
  std::optional<raft::HardState> pending_hard_state_;
  bool dir_dirty_ = false;          // segments removed: sync_dir at the next sync()
  std::optional<raft::PersistentState> recovered_;  // until load()
};

}  // namespace samsa

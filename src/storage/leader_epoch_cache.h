#pragma once
// LeaderEpochCache: the `leader-epoch-checkpoint` file of a partition log,
// Kafka's LeaderEpochFileCache. Each entry (epoch, start offset) says the
// leader of `epoch` wrote its first record at `start offset`; entries are
// strictly increasing in both. Text format (CheckpointFile, version 0):
//
//   0\n  <count>\n  <epoch> <start offset>\n  x count
//
// Written atomically (tmp + fsync + rename + fsync dir) whenever it changes:
// a new epoch's first append (rare), truncation, log start advances. A
// missing or malformed file is an empty cache (logged): it only loses the
// epoch history of old data, never records.
//
// Thread model: owned by its Log, one thread.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "io/file_system.h"

#include "base/result.h"
#include "model/ids.h"

namespace samsa {

inline constexpr const char* kLeaderEpochCheckpointFile = "leader-epoch-checkpoint";

struct EpochEntry {
  LeaderEpoch epoch;
  Offset start_offset;
  bool operator==(const EpochEntry&) const = default;
};

std::string format_leader_epoch_checkpoint(const std::vector<EpochEntry>& entries);
Result<std::vector<EpochEntry>> parse_leader_epoch_checkpoint(std::string_view text);

class LeaderEpochCache {
 public:
  // Loads `<dir>/leader-epoch-checkpoint` (a bad file is logged and ignored).
  // `files` must outlive the cache.
  static LeaderEpochCache load(FileSystem& files, const std::filesystem::path& dir);

  const std::vector<EpochEntry>& entries() const { return entries_; }
  std::optional<EpochEntry> latest() const {
    return entries_.empty() ? std::nullopt : std::optional<EpochEntry>(entries_.back());
  }

  // Records that `epoch` starts at `offset` if it is newer than the latest
  // epoch (older or equal epochs are ignored, as Kafka's assign()). If the
  // file cannot be written the cache is left unchanged.
  Status assign(LeaderEpoch epoch, Offset offset);
  // Drops entries starting at or after `end` (log truncated to `end`).
  Status truncate_from_end(Offset end);
  // Log start advanced to `start`: entries wholly below it go and the one
  // covering it starts there.
  Status truncate_from_start(Offset start);
  Status clear();

  // OffsetForLeaderEpoch: the largest epoch <= `epoch` and its end offset
  // (the next epoch's start, or `log_end` for the latest); nullopt if
  // `epoch` is older than every entry.
  std::optional<EpochEntry> end_offset_for(LeaderEpoch epoch, Offset log_end) const;

 private:
  LeaderEpochCache(FileSystem& files, std::filesystem::path file) : files_(&files), file_(std::move(file)) {}
  Status save();

  FileSystem* files_;
  std::filesystem::path file_;
  std::vector<EpochEntry> entries_;
};

}  // namespace samsa

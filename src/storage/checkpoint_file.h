#pragma once
// Offset checkpoint files of a log dir (`recovery-point-offset-checkpoint`,
// `log-start-offset-checkpoint`), in Kafka's CheckpointFile text format:
//
//   0\n                      version
//   <count>\n                number of entries
//   <topic> <partition> <offset>\n   x count
//
// Written atomically (tmp + fsync + rename + fsync dir). Reading is strict:
// anything malformed is kCorrupt, and the caller decides (LogManager logs it
// and falls back to a full recovery, which is always safe).
// Format: docs/formats/log-segments.md.

#include <filesystem>
#include <map>

#include "base/result.h"
#include "io/file_system.h"
#include "model/ids.h"

namespace samsa {

using OffsetCheckpoint = std::map<TopicPartition, Offset>;

inline constexpr const char* kRecoveryPointCheckpointFile = "recovery-point-offset-checkpoint";
inline constexpr const char* kLogStartOffsetCheckpointFile = "log-start-offset-checkpoint";

std::string format_offset_checkpoint(const OffsetCheckpoint& entries);
Result<OffsetCheckpoint> parse_offset_checkpoint(std::string_view text);

Status write_offset_checkpoint(FileSystem& files, const std::filesystem::path& file, const OffsetCheckpoint& entries);
// A missing file is an empty checkpoint.
Result<OffsetCheckpoint> read_offset_checkpoint(FileSystem& files, const std::filesystem::path& file);

}  // namespace samsa

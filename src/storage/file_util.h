#pragma once
// The whole-file helpers of storage, over a FileSystem (io/file_system.h):
// the atomic replace used by checkpoint files and partition.metadata, and a
// bounded whole-file read. Every failure is a Result naming the path and
// errno; nothing throws.

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "base/result.h"
#include "io/file_system.h"

namespace samsa::file_util {

// The directory holding `path` ("." for a bare name): what sync_dir() must
// fsync to make a create, rename or remove of `path` durable.
std::filesystem::path parent_dir(const std::filesystem::path& path);

// mkdir -p that survives a power loss: each directory it creates is made
// durable by an fsync of the directory holding it (Kafka flushes a new log
// dir's parent the same way). Existing directories cost an exists() each.
Status create_directories_durably(FileSystem& files, const std::filesystem::path& dir);

// Replaces `path` with `content` so that a crash leaves either the old or the
// new file, never a mix: write <path>.tmp, fsync, rename, fsync the dir.
Status write_file_atomic(FileSystem& files, const std::filesystem::path& path, std::string_view content);

// Reads a whole file of at most `max_bytes` (larger files are kCorrupt); a
// missing file is kNotFound.
Result<std::string> read_file(FileSystem& files, const std::filesystem::path& path, size_t max_bytes);

}  // namespace samsa::file_util

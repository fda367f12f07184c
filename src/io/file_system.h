#pragma once
// FileSystem: everything storage/ (and the metadata log, meta.properties,
// the log-dir handlers) does to files and directories, behind one interface
// with a real implementation (PosixFileSystem: POSIX calls) and a simulated
// one (testing/: a disk that loses unsynced data on a crash, returns ENOSPC
// or EIO on command, and is slow on command). Nothing above io/ calls the OS
// for files; tests/layering/check_layering.py enforces it.
//
// Durability, as on Linux: File::sync() makes a file's bytes durable;
// a create, rename or remove is durable only once sync_dir() of the
// directory that holds the name has returned ok. A crash may lose any
// operation not yet made durable (the simulator does exactly that).
//
// Paths are std::filesystem::path values (pure string manipulation is fine
// anywhere); every operation on them goes through this interface.
// Loop-thread only unless an implementation says otherwise; PosixFileSystem
// is thread-safe (the blocking executor fsyncs on its own thread).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/file.h"
#include "base/result.h"

namespace samsa {

enum class OpenMode {
  kRead,          // existing file, read-only
  kReadWrite,     // existing file
  kCreate,        // read-write, created (empty) if missing
  kCreateNew,     // read-write, must not exist yet (EEXIST otherwise)
  kTruncate,      // read-write, created if missing, emptied if present
};

struct DirEntry {
  std::string name;  // the last path component
  bool is_directory = false;
};

struct SpaceInfo {
  int64_t capacity_bytes = 0;
  int64_t available_bytes = 0;
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  virtual Result<FilePtr> open(const std::filesystem::path& path, OpenMode mode) = 0;
  // false for a missing path; an error only when the answer cannot be known.
  virtual Result<bool> exists(const std::filesystem::path& path) = 0;
  virtual Result<bool> is_directory(const std::filesystem::path& path) = 0;
  // The entries of `dir` ("." and ".." excluded), sorted by name so that
  // every implementation lists in the same order.
  virtual Result<std::vector<DirEntry>> list(const std::filesystem::path& dir) = 0;
  // mkdir -p; existing directories are fine.
  virtual Status create_directories(const std::filesystem::path& dir) = 0;
  // rename(2): `to` is replaced atomically if it exists.
  virtual Status rename(const std::filesystem::path& from, const std::filesystem::path& to) = 0;
  // Removes a file or an empty directory; a missing path is not an error.
  virtual Status remove(const std::filesystem::path& path) = 0;
  // rm -r; a missing path is not an error.
  virtual Status remove_all(const std::filesystem::path& path) = 0;
  // fsync of a directory: the creates, renames and removes in it are durable.
  virtual Status sync_dir(const std::filesystem::path& dir) = 0;
  virtual Result<SpaceInfo> space(const std::filesystem::path& path) = 0;

  // Open descriptors of this process and their limit (RLIMIT_NOFILE), for
  // the descriptor reserve; nullopt where it cannot be known.
  struct DescriptorUsage {
    int64_t open = 0;
    int64_t limit = 0;
  };
  virtual std::optional<DescriptorUsage> descriptor_usage() { return std::nullopt; }
};

}  // namespace samsa

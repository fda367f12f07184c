#pragma once
// Small POSIX file helpers for storage: whole-buffer pwrite/pread that retry
// on EINTR and short transfers, fsync of files and directories, and the
// atomic replace used by checkpoint files (tmp + fsync + rename + fsync dir).
// Every failure is a Result naming the path and errno; nothing throws.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "base/bytes.h"
#include "base/result.h"

namespace samsa::file_util {

// open(2) with O_CLOEXEC added; the fd is owned by the caller.
Result<int> open_fd(const std::filesystem::path& path, int flags, int mode = 0644);

// Writes all of `data` at `position` (one pwrite unless the kernel writes
// short, then it continues where it stopped).
Status pwrite_all(int fd, ByteView data, int64_t position, const std::filesystem::path& path);

// Reads up to `size` bytes at `position`; fewer only at end of file.
Result<size_t> pread_upto(int fd, uint8_t* out, size_t size, int64_t position,
                          const std::filesystem::path& path);

Result<int64_t> file_size(int fd, const std::filesystem::path& path);
Status truncate(int fd, int64_t size, const std::filesystem::path& path);
Status fsync_fd(int fd, const std::filesystem::path& path);
Status fsync_dir(const std::filesystem::path& dir);

// Replaces `path` with `content` so that a crash leaves either the old or the
// new file, never a mix: write <path>.tmp, fsync, rename, fsync the dir.
Status write_file_atomic(const std::filesystem::path& path, std::string_view content);

// Reads a whole file of at most `max_bytes` (larger files are an error).
Result<std::string> read_file(const std::filesystem::path& path, size_t max_bytes);

// Removes a file; a missing file is not an error.
Status remove_file(const std::filesystem::path& path);

// rename(2); `to` is replaced atomically if it exists.
Status rename_file(const std::filesystem::path& from, const std::filesystem::path& to);

// posix_fallocate of [0, size).
Status allocate(int fd, int64_t size, const std::filesystem::path& path);

// File descriptors of this process: open now (counted in /proc/self/fd) and
// the RLIMIT_NOFILE soft limit. nullopt where either cannot be known.
struct DescriptorUsage {
  int64_t open = 0;
  int64_t limit = 0;
};
std::optional<DescriptorUsage> descriptor_usage();

// --- Fault injection (tests only) ---
// Every mutating operation above (open with O_CREAT, write, truncate,
// allocate, fsync of a file or dir, rename, remove) first asks the hook.
// It returns 0 to proceed, an errno to fail the operation without doing it,
// or -errno (writes only) to write the first half of the data and then fail
// with errno (a torn write). Not thread-safe: install it before the code
// under test runs and clear it (empty function) afterwards.
enum class FileOp { kOpen, kWrite, kTruncate, kAllocate, kFsync, kRename, kRemove };
const char* to_string(FileOp op);
using FaultHook = std::function<int(FileOp op, const std::filesystem::path& path)>;
void set_fault_hook(FaultHook hook);

}  // namespace samsa::file_util

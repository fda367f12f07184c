#pragma once
// PosixFileSystem and PosixFile: the real FileSystem (io/file_system.h) and
// File (base/file.h), over POSIX calls. A PosixFile is one descriptor:
// pread/pwrite that retry EINTR and short transfers, fsync, posix_fallocate,
// ftruncate, SEEK_HOLE for has_hole(), a read-only MAP_SHARED mmap for
// map(), and native_handle() = the descriptor, which the connection hands
// to sendfile(). Every failure is a Result naming the path and the errno
// (errno_error: ENOSPC/EDQUOT -> ErrorKind::kNoSpace).
//
// Thread-safety: PosixFileSystem keeps no state, so any thread may use it
// (the blocking executor fsyncs on its own thread). A PosixFile's calls are
// positional, so concurrent read_at()/sync() on one File are safe; writes
// are ordered by their one owner (a Segment).

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/file.h"
#include "io/file_system.h"

namespace samsa {

class PosixFile final : public File {
 public:
  // Takes ownership of `fd` (closed by the destructor).
  PosixFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~PosixFile() override;
  PosixFile(const PosixFile&) = delete;
  PosixFile& operator=(const PosixFile&) = delete;

  const std::string& path() const override { return path_; }
  Status write_at(ByteView data, int64_t position) override;
  Result<size_t> read_at(uint8_t* out, size_t size, int64_t position) const override;
  Result<int64_t> size() const override;
  Status truncate(int64_t size) override;
  Status allocate(int64_t size) override;
  Status sync() override;
  Result<bool> has_hole(int64_t size) const override;
  Result<std::unique_ptr<FileMapping>> map(size_t size) const override;
  int native_handle() const override { return fd_; }

 private:
  int fd_;
  std::string path_;
};

class PosixFileSystem final : public FileSystem {
 public:
  Result<FilePtr> open(const std::filesystem::path& path, OpenMode mode) override;
  Result<bool> exists(const std::filesystem::path& path) override;
  Result<bool> is_directory(const std::filesystem::path& path) override;
  Result<std::vector<DirEntry>> list(const std::filesystem::path& dir) override;
  Status create_directories(const std::filesystem::path& dir) override;
  Status rename(const std::filesystem::path& from, const std::filesystem::path& to) override;
  Status remove(const std::filesystem::path& path) override;
  Status remove_all(const std::filesystem::path& path) override;
  Status sync_dir(const std::filesystem::path& dir) override;
  Result<SpaceInfo> space(const std::filesystem::path& path) override;
  // Counted in /proc/self/fd, against the RLIMIT_NOFILE soft limit.
  std::optional<DescriptorUsage> descriptor_usage() override;
};

}  // namespace samsa

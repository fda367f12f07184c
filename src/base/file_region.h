#pragma once
// FileRegion: "these bytes of that open file". Responses carry FileRegions
// instead of copies so that the connection can sendfile() segment bytes from
// the page cache straight to the socket. The shared FileHandle keeps the
// descriptor open (and its number from being reused) until the last response
// that refers to it has been sent, even if the segment is deleted meanwhile.

#include <cstdint>
#include <memory>

#include "base/bytes.h"
#include "base/file.h"
#include "base/result.h"

namespace samsa {

// A descriptor seen as a File (base/file.h), so that a connection sends any
// region through Stream::send_file(const File&). Interim: the seamfs branch
// replaces FileHandle by the FileSystem's own File; only what a sender needs
// (read_at, size, native_handle) works here, the rest is kUnsupported.
class FileHandle final : public File {
 public:
  explicit FileHandle(int fd) : fd_(fd) {}
  ~FileHandle() override;
  FileHandle(const FileHandle&) = delete;
  FileHandle& operator=(const FileHandle&) = delete;
  int fd() const { return fd_; }

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
  std::string path_ = "(descriptor)";
};

struct FileRegion {
  std::shared_ptr<const FileHandle> file;
  int64_t position = 0;
  int32_t size = 0;
};

// Reads a region into memory: for the few readers that need the bytes
// themselves (metadata replay, down-conversion for old fetchers).
Result<Bytes> read_region(const FileRegion& region);

}  // namespace samsa

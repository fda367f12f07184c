#pragma once
// FileRegion: "these bytes of that open file". Responses carry FileRegions
// instead of copies so that the connection can sendfile() segment bytes from
// the page cache straight to the socket. The shared FileHandle keeps the
// descriptor open (and its number from being reused) until the last response
// that refers to it has been sent, even if the segment is deleted meanwhile.

#include <cstdint>
#include <memory>

#include "base/bytes.h"
#include "base/result.h"

namespace samsa {

class FileHandle {
 public:
  explicit FileHandle(int fd) : fd_(fd) {}
  ~FileHandle();
  FileHandle(const FileHandle&) = delete;
  FileHandle& operator=(const FileHandle&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
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

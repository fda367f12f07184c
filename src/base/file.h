#pragma once
// File: one open file, as the layers above io/ see it. The interface lives in
// base/ (not io/) because OutBuffer's FileRegion, a base/ vocabulary type,
// refers to file bytes that a connection sends without copying them.
//
// Two implementations: io/posix_file_system.* (a descriptor: pread/pwrite,
// fsync, mmap, sendfile) and the simulated disk in testing/, which keeps the
// bytes written since the last sync() apart and loses or tears them when the
// simulated node crashes. Code above io/ never learns which one it has.
//
// Contract, for both:
// - write_at() writes all of `data` at `position` or fails (a short write is
//   retried inside); it may extend the file, leaving a hole before `position`.
//   Written bytes are visible to read_at() and to every mapping at once, but
//   are durable only after sync() returns ok.
// - sync() makes the file's data and size durable (fsync). It does NOT make
//   the file's name durable: that takes FileSystem::sync_dir() of its parent.
// - Every failure is a Result naming the path and the errno; nothing throws.
// - A File may outlive its name (removed or renamed while open): the bytes
//   stay readable until the last reference is dropped, as with a descriptor.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "base/bytes.h"
#include "base/result.h"

namespace samsa {

// A read-only view of a file's first size() bytes that sees later
// write_at()s within that range (MAP_SHARED over the page cache in the real
// one). Valid until destroyed; the file must not shrink below size() meanwhile.
class FileMapping {
 public:
  virtual ~FileMapping() = default;
  virtual const uint8_t* data() const = 0;
  virtual size_t size() const = 0;
};

class File {
 public:
  virtual ~File() = default;
  // The path it was opened with (for messages only).
  virtual const std::string& path() const = 0;

  virtual Status write_at(ByteView data, int64_t position) = 0;
  // Reads up to `size` bytes at `position`; fewer only at end of file.
  virtual Result<size_t> read_at(uint8_t* out, size_t size, int64_t position) const = 0;
  virtual Result<int64_t> size() const = 0;
  // Sets the length; a longer file reads zeros (a hole) in the new range.
  virtual Status truncate(int64_t size) = 0;
  // Reserves disk blocks for [0, size) (posix_fallocate): later writes in the
  // range cannot fail with ENOSPC.
  virtual Status allocate(int64_t size) = 0;
  virtual Status sync() = 0;
  // Whether [0, size) has a range that was never written (a sparse,
  // preallocated tail that a crash left unwritten).
  virtual Result<bool> has_hole(int64_t size) const = 0;
  virtual Result<std::unique_ptr<FileMapping>> map(size_t size) const = 0;
  // Wall-clock time of the last modification, in ms since the epoch (the
  // age of a segment without record timestamps: Kafka's lastModified
  // fallback for retention.ms). Not every implementation knows it.
  virtual Result<int64_t> modified_ms() const {
    return Error(ErrorKind::kUnsupported, "modification time of " + path());
  }

  // The descriptor for zero-copy transfer to a socket (sendfile), or -1 when
  // there is none (the simulated disk): the connection then reads the bytes.
  virtual int native_handle() const { return -1; }
};

using FilePtr = std::shared_ptr<File>;

}  // namespace samsa

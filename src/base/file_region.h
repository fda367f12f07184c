#pragma once
// FileRegion: "these bytes of that open file". Responses carry FileRegions
// instead of copies so that the connection can hand segment bytes from the
// page cache straight to the socket (sendfile through the File's
// native_handle()). The shared File keeps the file open (and, for a
// descriptor, its number from being reused) until the last response that
// refers to it has been sent, even if the segment is deleted meanwhile.

#include <cstdint>
#include <memory>

#include "base/bytes.h"
#include "base/file.h"
#include "base/result.h"

namespace samsa {

struct FileRegion {
  std::shared_ptr<const File> file;
  int64_t position = 0;
  int32_t size = 0;
};

// Reads a region into memory: for the few readers that need the bytes
// themselves (metadata replay, down-conversion for old fetchers, a
// connection whose file has no descriptor).
Result<Bytes> read_region(const FileRegion& region);

}  // namespace samsa

#include "base/file_region.h"

#include <unistd.h>

#include <cerrno>

namespace samsa {

FileHandle::~FileHandle() {
  if (fd_ >= 0) ::close(fd_);
}

Result<Bytes> read_region(const FileRegion& region) {
  Bytes out(size_t(region.size));
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::pread(region.file->fd(), out.data() + done, out.size() - done, region.position + int64_t(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_error("read file region", errno);
    }
    if (n == 0) return Error(ErrorKind::kCorrupt, "file shorter than the region read");
    done += size_t(n);
  }
  return out;
}

}  // namespace samsa

#include "base/file_region.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace samsa {

FileHandle::~FileHandle() {
  if (fd_ >= 0) ::close(fd_);
}

namespace {
Error unsupported(const char* what) { return Error(ErrorKind::kUnsupported, std::string(what) + " of a FileHandle"); }
}  // namespace

Status FileHandle::write_at(ByteView, int64_t) { return unsupported("write_at"); }
Status FileHandle::truncate(int64_t) { return unsupported("truncate"); }
Status FileHandle::allocate(int64_t) { return unsupported("allocate"); }
Status FileHandle::sync() { return unsupported("sync"); }
Result<bool> FileHandle::has_hole(int64_t) const { return unsupported("has_hole"); }
Result<std::unique_ptr<FileMapping>> FileHandle::map(size_t) const { return unsupported("map"); }

Result<size_t> FileHandle::read_at(uint8_t* out, size_t size, int64_t position) const {
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd_, out + done, size - done, position + int64_t(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_error("read file region", errno);
    }
    if (n == 0) break;
    done += size_t(n);
  }
  return done;
}

Result<int64_t> FileHandle::size() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return errno_error("fstat", errno);
  return int64_t(st.st_size);
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

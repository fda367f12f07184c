#include "storage/file_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace samsa::file_util {

namespace {
FaultHook& fault_hook() {
  static FaultHook hook;
  return hook;
}
int injected(FileOp op, const std::filesystem::path& path) {
  const FaultHook& hook = fault_hook();
  return hook ? hook(op, path) : 0;
}
}  // namespace

const char* to_string(FileOp op) {
  switch (op) {
    case FileOp::kOpen: return "open";
    case FileOp::kWrite: return "write";
    case FileOp::kTruncate: return "truncate";
    case FileOp::kAllocate: return "allocate";
    case FileOp::kFsync: return "fsync";
    case FileOp::kRename: return "rename";
    case FileOp::kRemove: return "remove";
  }
  return "?";
}

void set_fault_hook(FaultHook hook) { fault_hook() = std::move(hook); }

Status rename_file(const std::filesystem::path& from, const std::filesystem::path& to) {
  if (int e = injected(FileOp::kRename, from); e > 0) return errno_error("rename " + from.string(), e);
  if (::rename(from.c_str(), to.c_str()) != 0) {
    return errno_error("rename " + from.string() + " -> " + to.string(), errno);
  }
  return ok_status();
}

Status allocate(int fd, int64_t size, const std::filesystem::path& path) {
  if (int e = injected(FileOp::kAllocate, path); e > 0) return errno_error("fallocate " + path.string(), e);
  int rc = ::posix_fallocate(fd, 0, off_t(size));
  if (rc != 0) return errno_error("fallocate " + path.string(), rc);
  return ok_status();
}

Result<int> open_fd(const std::filesystem::path& path, int flags, int mode) {
  if (flags & O_CREAT) {
    if (int e = injected(FileOp::kOpen, path); e > 0) return errno_error("open " + path.string(), e);
  }
  int fd;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return errno_error("open " + path.string(), errno);
  return fd;
}

Status pwrite_all(int fd, ByteView data, int64_t position, const std::filesystem::path& path) {
  if (int e = injected(FileOp::kWrite, path); e != 0) {
    if (e < 0) {  // torn: half of the data reaches the file
      (void)::pwrite(fd, data.data(), data.size() / 2, off_t(position));
      e = -e;
    }
    return errno_error("write " + path.string(), e);
  }
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::pwrite(fd, data.data() + done, data.size() - done, off_t(position + int64_t(done)));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_error("write " + path.string(), errno);
    }
    done += size_t(n);
  }
  return ok_status();
}

Result<size_t> pread_upto(int fd, uint8_t* out, size_t size, int64_t position,
                          const std::filesystem::path& path) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd, out + done, size - done, off_t(position + int64_t(done)));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_error("read " + path.string(), errno);
    }
    if (n == 0) break;  // end of file
    done += size_t(n);
  }
  return done;
}

Result<int64_t> file_size(int fd, const std::filesystem::path& path) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return errno_error("stat " + path.string(), errno);
  return int64_t(st.st_size);
}

Status truncate(int fd, int64_t size, const std::filesystem::path& path) {
  if (int e = injected(FileOp::kTruncate, path); e > 0) return errno_error("truncate " + path.string(), e);
  int rc;
  do {
    rc = ::ftruncate(fd, off_t(size));
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) return errno_error("truncate " + path.string(), errno);
  return ok_status();
}

Status fsync_fd(int fd, const std::filesystem::path& path) {
  if (int e = injected(FileOp::kFsync, path); e > 0) return errno_error("fsync " + path.string(), e);
  int rc;
  do {
    rc = ::fsync(fd);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) return errno_error("fsync " + path.string(), errno);
  return ok_status();
}

Status fsync_dir(const std::filesystem::path& dir) {
  ASSIGN_OR_RETURN(int fd, open_fd(dir, O_RDONLY | O_DIRECTORY));
  Status st = fsync_fd(fd, dir);
  ::close(fd);
  return st;
}

Status write_file_atomic(const std::filesystem::path& path, std::string_view content) {
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  ASSIGN_OR_RETURN(int fd, open_fd(tmp, O_WRONLY | O_CREAT | O_TRUNC));
  Status st = pwrite_all(fd, as_bytes(content), 0, tmp);
  if (st.ok()) st = fsync_fd(fd, tmp);
  ::close(fd);
  RETURN_IF_ERROR(st);
  RETURN_IF_ERROR(rename_file(tmp, path));
  return fsync_dir(path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path());
}

Result<std::string> read_file(const std::filesystem::path& path, size_t max_bytes) {
  ASSIGN_OR_RETURN(int fd, open_fd(path, O_RDONLY));
  Result<int64_t> size = file_size(fd, path);
  if (!size.ok()) {
    ::close(fd);
    return size.error();
  }
  if (size_t(*size) > max_bytes) {
    ::close(fd);
    return Error(ErrorKind::kCorrupt, path.string() + ": file larger than " + std::to_string(max_bytes));
  }
  std::string out(size_t(*size), '\0');
  Result<size_t> n = pread_upto(fd, reinterpret_cast<uint8_t*>(out.data()), out.size(), 0, path);
  ::close(fd);
  if (!n.ok()) return n.error();
  out.resize(*n);
  return out;
}

Status remove_file(const std::filesystem::path& path) {
  if (int e = injected(FileOp::kRemove, path); e > 0) return errno_error("unlink " + path.string(), e);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return errno_error("unlink " + path.string(), errno);
  return ok_status();
}

std::optional<DescriptorUsage> descriptor_usage() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return std::nullopt;
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return std::nullopt;
  int64_t open = -3;  // ".", ".." and the descriptor of `dir` itself
  while (::readdir(dir) != nullptr) ++open;
  ::closedir(dir);
  return DescriptorUsage{std::max<int64_t>(open, 0), int64_t(limit.rlim_cur)};
}

}  // namespace samsa::file_util

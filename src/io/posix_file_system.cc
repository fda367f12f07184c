#include "io/posix_file_system.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

namespace samsa {

namespace {

Error fs_error(const char* what, const std::filesystem::path& path, int err) {
  return errno_error(std::string(what) + " " + path.string(), err);
}

Result<int> open_retrying(const std::filesystem::path& path, int flags) {
  int fd;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return fs_error("open", path, errno);
  return fd;
}

int flags_of(OpenMode mode) {
  switch (mode) {
    case OpenMode::kRead: return O_RDONLY;
    case OpenMode::kReadWrite: return O_RDWR;
    case OpenMode::kCreate: return O_RDWR | O_CREAT;
    case OpenMode::kCreateNew: return O_RDWR | O_CREAT | O_EXCL;
    case OpenMode::kTruncate: return O_RDWR | O_CREAT | O_TRUNC;
  }
  return O_RDONLY;
}

// A read-only shared mapping; munmap on destruction. A zero-byte mapping
// has no pages (mmap refuses length 0) and a null data().
class PosixMapping final : public FileMapping {
 public:
  PosixMapping(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  ~PosixMapping() override {
    if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
  }
  PosixMapping(const PosixMapping&) = delete;
  PosixMapping& operator=(const PosixMapping&) = delete;
  const uint8_t* data() const override { return data_; }
  size_t size() const override { return size_; }

 private:
  const uint8_t* data_;
  size_t size_;
};

}  // namespace

// --- PosixFile ---

PosixFile::~PosixFile() {
  if (fd_ >= 0) ::close(fd_);
}

Status PosixFile::write_at(ByteView data, int64_t position) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::pwrite(fd_, data.data() + done, data.size() - done, off_t(position + int64_t(done)));
    if (n < 0) {
      if (errno == EINTR) continue;
      return fs_error("write", path_, errno);
    }
    done += size_t(n);
  }
  return ok_status();
}

Result<size_t> PosixFile::read_at(uint8_t* out, size_t size, int64_t position) const {
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd_, out + done, size - done, off_t(position + int64_t(done)));
    if (n < 0) {
      if (errno == EINTR) continue;
      return fs_error("read", path_, errno);
    }
    if (n == 0) break;  // end of file
    done += size_t(n);
  }
  return done;
}

Result<int64_t> PosixFile::size() const {
  struct stat st;
  if (::fstat(fd_, &st) != 0) return fs_error("stat", path_, errno);
  return int64_t(st.st_size);
}

Status PosixFile::truncate(int64_t size) {
  int rc;
  do {
    rc = ::ftruncate(fd_, off_t(size));
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) return fs_error("truncate", path_, errno);
  return ok_status();
}

Status PosixFile::allocate(int64_t size) {
  int rc = ::posix_fallocate(fd_, 0, off_t(size));  // returns the errno, does not set it
  if (rc != 0) return fs_error("fallocate", path_, rc);
  return ok_status();
}

Status PosixFile::sync() {
  int rc;
  do {
    rc = ::fsync(fd_);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) return fs_error("fsync", path_, errno);
  return ok_status();
}

Result<bool> PosixFile::has_hole(int64_t size) const {
  if (size <= 0) return false;
  // SEEK_HOLE reports the end of the file where the file system does not
  // track holes, so "no hole" is the safe answer there.
  off_t hole = ::lseek(fd_, 0, SEEK_HOLE);
  if (hole < 0) {
    if (errno == ENXIO || errno == EINVAL) return false;
    return fs_error("lseek SEEK_HOLE", path_, errno);
  }
  return int64_t(hole) < size;
}

Result<std::unique_ptr<FileMapping>> PosixFile::map(size_t size) const {
  if (size == 0) return std::unique_ptr<FileMapping>(new PosixMapping(nullptr, 0));
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd_, 0);
  if (p == MAP_FAILED) return fs_error("mmap", path_, errno);
  return std::unique_ptr<FileMapping>(new PosixMapping(static_cast<const uint8_t*>(p), size));
}

// --- PosixFileSystem ---

Result<FilePtr> PosixFileSystem::open(const std::filesystem::path& path, OpenMode mode) {
  ASSIGN_OR_RETURN(int fd, open_retrying(path, flags_of(mode)));
  return FilePtr(std::make_shared<PosixFile>(fd, path.string()));
}

Result<bool> PosixFileSystem::exists(const std::filesystem::path& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) return true;
  if (errno == ENOENT || errno == ENOTDIR) return false;
  return fs_error("stat", path, errno);
}

Result<bool> PosixFileSystem::is_directory(const std::filesystem::path& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) return S_ISDIR(st.st_mode);
  if (errno == ENOENT || errno == ENOTDIR) return false;
  return fs_error("stat", path, errno);
}

Result<std::vector<DirEntry>> PosixFileSystem::list(const std::filesystem::path& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return fs_error("opendir", dir, errno);
  std::vector<DirEntry> entries;
  for (;;) {
    errno = 0;
    const dirent* e = ::readdir(d);
    if (e == nullptr) break;
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    bool is_dir = e->d_type == DT_DIR;
    if (e->d_type == DT_UNKNOWN || e->d_type == DT_LNK) {  // ask stat (follows links, as is_directory does)
      struct stat st;
      is_dir = ::stat((dir / name).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    }
    entries.push_back({std::move(name), is_dir});
  }
  const int err = errno;
  ::closedir(d);
  if (err != 0) return fs_error("readdir", dir, err);
  std::sort(entries.begin(), entries.end(), [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
  return entries;
}

Status PosixFileSystem::create_directories(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return fs_error("mkdir", dir, ec.value());
  return ok_status();
}

Status PosixFileSystem::rename(const std::filesystem::path& from, const std::filesystem::path& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    return errno_error("rename " + from.string() + " -> " + to.string(), errno);
  }
  return ok_status();
}

Status PosixFileSystem::remove(const std::filesystem::path& path) {
  if (::unlink(path.c_str()) == 0 || errno == ENOENT) return ok_status();
  if (errno != EISDIR && errno != EPERM) return fs_error("unlink", path, errno);
  if (::rmdir(path.c_str()) == 0 || errno == ENOENT) return ok_status();
  return fs_error("rmdir", path, errno);
}

Status PosixFileSystem::remove_all(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (ec) return fs_error("remove", path, ec.value());
  return ok_status();
}

Status PosixFileSystem::sync_dir(const std::filesystem::path& dir) {
  ASSIGN_OR_RETURN(int fd, open_retrying(dir, O_RDONLY | O_DIRECTORY));
  int rc;
  do {
    rc = ::fsync(fd);
  } while (rc != 0 && errno == EINTR);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return fs_error("fsync", dir, err);
  return ok_status();
}

Result<SpaceInfo> PosixFileSystem::space(const std::filesystem::path& path) {
  struct statvfs st;
  if (::statvfs(path.c_str(), &st) != 0) return fs_error("statvfs", path, errno);
  return SpaceInfo{int64_t(st.f_blocks) * int64_t(st.f_frsize), int64_t(st.f_bavail) * int64_t(st.f_frsize)};
}

std::optional<FileSystem::DescriptorUsage> PosixFileSystem::descriptor_usage() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return std::nullopt;
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return std::nullopt;
  int64_t open = -3;  // ".", ".." and the descriptor of `dir` itself
  while (::readdir(dir) != nullptr) ++open;
  ::closedir(dir);
  return DescriptorUsage{std::max<int64_t>(open, 0), int64_t(limit.rlim_cur)};
}

}  // namespace samsa

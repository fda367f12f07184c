#include "storage/index_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <utility>

#include "storage/file_util.h"

namespace samsa {

IndexFile::IndexFile(IndexFile&& other) noexcept { *this = std::move(other); }

IndexFile& IndexFile::operator=(IndexFile&& other) noexcept {
  if (this != &other) {
    close();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    entry_size_ = other.entry_size_;
    entries_ = std::exchange(other.entries_, 0);
    map_ = std::exchange(other.map_, nullptr);
    mapped_bytes_ = std::exchange(other.mapped_bytes_, 0);
    file_was_exact_ = other.file_was_exact_;
    had_holes_ = other.had_holes_;
  }
  return *this;
}

IndexFile::~IndexFile() { close(); }

void IndexFile::close() {
  if (map_ != nullptr) ::munmap(const_cast<uint8_t*>(map_), mapped_bytes_);
  map_ = nullptr;
  mapped_bytes_ = 0;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Result<IndexFile> IndexFile::open(const std::filesystem::path& path, size_t entry_size, bool truncate) {
  IndexFile f;
  f.path_ = path;
  f.entry_size_ = entry_size;
  ASSIGN_OR_RETURN(f.fd_, file_util::open_fd(path, O_RDWR | O_CREAT | (truncate ? O_TRUNC : 0)));
  ASSIGN_OR_RETURN(int64_t size, file_util::file_size(f.fd_, path));
  f.file_was_exact_ = size % int64_t(entry_size) == 0;
  // A hole before the end is the never-written tail of a preallocated
  // (untrimmed) index. Reading it through the mapping would fault a page
  // in, which on a full tmpfs is SIGBUS; the caller rebuilds such an index
  // without reading it. (SEEK_HOLE reports the end where holes are unknown.)
  off_t hole = size > 0 ? ::lseek(f.fd_, 0, SEEK_HOLE) : 0;
  f.had_holes_ = hole >= 0 && hole < size;
  f.entries_ = size_t(size) / entry_size;
  RETURN_IF_ERROR(f.remap(f.entries_ * entry_size));
  return f;
}

Status IndexFile::remap(size_t bytes) {
  if (map_ != nullptr) ::munmap(const_cast<uint8_t*>(map_), mapped_bytes_);
  map_ = nullptr;
  mapped_bytes_ = 0;
  if (bytes == 0) return ok_status();
  void* p = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd_, 0);
  if (p == MAP_FAILED) return errno_error("mmap " + path_.string(), errno);
  map_ = static_cast<const uint8_t*>(p);
  mapped_bytes_ = bytes;
  return ok_status();
}

const uint8_t* IndexFile::entry(size_t i) const {
  ASSERT(i < entries_);
  return map_ + i * entry_size_;
}

Status IndexFile::append(const uint8_t* entry) {
  ASSERT(!full());
  RETURN_IF_ERROR(file_util::pwrite_all(fd_, ByteView(entry, entry_size_), int64_t(entries_ * entry_size_), path_));
  ++entries_;
  return ok_status();
}

void IndexFile::truncate_entries(size_t n) {
  if (n < entries_) entries_ = n;
}

Status IndexFile::resize(int64_t bytes) {
  size_t target = size_t(bytes < 0 ? 0 : bytes) / entry_size_ * entry_size_;
  if (target < entries_ * entry_size_) target = entries_ * entry_size_;
  // Unmap first: shrinking a file under a live mapping invites SIGBUS.
  RETURN_IF_ERROR(remap(0));
  RETURN_IF_ERROR(file_util::truncate(fd_, int64_t(target), path_));
  file_was_exact_ = true;
  return remap(target);
}

Status IndexFile::flush() {
  if (fd_ < 0) return ok_status();
  return file_util::fsync_fd(fd_, path_);
}

Status IndexFile::remove() {
  close();
  return file_util::remove_file(path_);
}

}  // namespace samsa

#include "storage/index_file.h"

#include <utility>

namespace samsa {

IndexFile::IndexFile(IndexFile&& other) noexcept { *this = std::move(other); }

IndexFile& IndexFile::operator=(IndexFile&& other) noexcept {
  if (this != &other) {
    close();
    files_ = other.files_;
    path_ = std::move(other.path_);
    file_ = std::move(other.file_);
    entry_size_ = other.entry_size_;
    entries_ = std::exchange(other.entries_, 0);
    mapping_ = std::move(other.mapping_);
    map_ = std::exchange(other.map_, nullptr);
    mapped_bytes_ = std::exchange(other.mapped_bytes_, 0);
    file_was_exact_ = other.file_was_exact_;
    had_holes_ = other.had_holes_;
  }
  return *this;
}

IndexFile::~IndexFile() { close(); }

void IndexFile::close() {
  mapping_.reset();  // before the file: a mapping must not outlive its size guarantee
  map_ = nullptr;
  mapped_bytes_ = 0;
  file_.reset();
}

Result<IndexFile> IndexFile::open(FileSystem& files, const std::filesystem::path& path, size_t entry_size,
                                  bool truncate) {
  IndexFile f;
  f.files_ = &files;
  f.path_ = path;
  f.entry_size_ = entry_size;
  ASSIGN_OR_RETURN(f.file_, files.open(path, truncate ? OpenMode::kTruncate : OpenMode::kCreate));
  ASSIGN_OR_RETURN(int64_t size, f.file_->size());
  f.file_was_exact_ = size % int64_t(entry_size) == 0;
  // A hole before the end is the never-written tail of a preallocated
  // (untrimmed) index. Reading it through the mapping would fault a page
  // in, which on a full tmpfs is SIGBUS; the caller rebuilds such an index
  // without reading it.
  ASSIGN_OR_RETURN(f.had_holes_, f.file_->has_hole(size));
  f.entries_ = size_t(size) / entry_size;
  RETURN_IF_ERROR(f.remap(f.entries_ * entry_size));
  return f;
}

Status IndexFile::remap(size_t bytes) {
  mapping_.reset();
  map_ = nullptr;
  mapped_bytes_ = 0;
  if (bytes == 0) return ok_status();
  ASSIGN_OR_RETURN(mapping_, file_->map(bytes));
  map_ = mapping_->data();
  mapped_bytes_ = bytes;
  return ok_status();
}

const uint8_t* IndexFile::entry(size_t i) const {
  ASSERT(i < entries_);
  ASSERT_MSG((i + 1) * entry_size_ <= mapped_bytes_, "index entry outside the mapping");
  return map_ + i * entry_size_;
}

Status IndexFile::append(const uint8_t* entry) {
  ASSERT(!full());
  RETURN_IF_ERROR(file_->write_at(ByteView(entry, entry_size_), int64_t(entries_ * entry_size_)));
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
  size_t mapped = mapped_bytes_;
  RETURN_IF_ERROR(remap(0));
  Status cut = file_->truncate(int64_t(target));
  if (!cut.ok()) {
    // The file kept its length: map it again, or lookups would read through
    // a null mapping (found by the broker simulation, seed 9, under EIO).
    Status back = remap(mapped);
    return back.ok() ? cut : back;
  }
  file_was_exact_ = true;
  return remap(target);
}

Status IndexFile::flush() {
  if (!file_) return ok_status();
  return file_->sync();
}

Status IndexFile::remove() {
  close();
  if (files_ == nullptr) return ok_status();  // never opened
  return files_->remove(path_);
}

}  // namespace samsa

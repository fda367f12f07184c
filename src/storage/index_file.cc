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

// The new mapping is made before the old one goes: if it fails, the index
// keeps the mapping its entries are read through.
Status IndexFile::remap(size_t bytes) {
  std::unique_ptr<FileMapping> mapping;
  if (bytes > 0) {
    ASSIGN_OR_RETURN(mapping, file_->map(bytes));
  }
  mapping_ = std::move(mapping);
  map_ = mapping_ ? mapping_->data() : nullptr;
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

// Never leaves an entry outside the mapping, whichever step fails (found by
// the broker simulation: seed 9, a fetch through a null mapping after an
// EIO; seed 45, a trim on a full disk whose truncate and remap both failed
// left 41 entries unmapped). Shrinking maps the shorter prefix first (a file
// cut under a live mapping invites SIGBUS); growing extends the file first
// (the old mapping stays valid while the file grows). A failure keeps a
// mapping that covers every entry, so the index stays readable, and the
// error is the caller's: out of space is retried, anything else takes the
// log offline (storage/log.h).
Status IndexFile::resize(int64_t bytes) {
  size_t target = size_t(bytes < 0 ? 0 : bytes) / entry_size_ * entry_size_;
  if (target < entries_ * entry_size_) target = entries_ * entry_size_;
  if (target < mapped_bytes_) {
    RETURN_IF_ERROR(remap(target));
    RETURN_IF_ERROR(file_->truncate(int64_t(target)));
  } else {
    RETURN_IF_ERROR(file_->truncate(int64_t(target)));
    RETURN_IF_ERROR(remap(target));
  }
  file_was_exact_ = true;
  return ok_status();
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

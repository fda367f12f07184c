#pragma once
// IndexFile: a file of fixed-size entries, the common part of OffsetIndex and
// TimeIndex. Owned by one Segment; used by one thread at a time.
//
// Writes go through File::write_at (pwrite) and lookups read a read-only
// File::map() (a shared mmap) of the file. Why both: pwrite returns
// ENOSPC/EIO as an error value, whereas a store into a mapping of a sparse
// (preallocated) file on a full disk kills the process with SIGBUS; the
// read-only mapping gives binary search over the page cache without a
// syscall (or a virtual call) per probe and without a heap copy of every
// segment's index (cold segments cost nothing until looked up). The File
// contract makes written bytes visible to every mapping at once.
//
// The file is preallocated (ftruncate, sparse) to the maximum index size
// while its segment is active, and trimmed to its entries on roll and close,
// like Kafka. Entries beyond entries() are never read.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>

#include "base/file.h"
#include "base/result.h"
#include "io/file_system.h"

namespace samsa {

class IndexFile {
 public:
  IndexFile() = default;
  IndexFile(IndexFile&& other) noexcept;
  IndexFile& operator=(IndexFile&& other) noexcept;
  IndexFile(const IndexFile&) = delete;
  IndexFile& operator=(const IndexFile&) = delete;
  ~IndexFile();

  // Opens (creating if missing) `path`. With `truncate`, any content is
  // dropped. entries() is the file size rounded down to whole entries;
  // file_was_exact() says whether the size was a multiple of entry_size.
  static Result<IndexFile> open(FileSystem& files, const std::filesystem::path& path, size_t entry_size,
                                bool truncate);

  size_t entry_size() const { return entry_size_; }
  size_t entries() const { return entries_; }
  // Entries that fit in the current file size (capacity while active).
  size_t capacity() const { return mapped_bytes_ / entry_size_; }
  bool full() const { return entries_ >= capacity(); }
  bool file_was_exact() const { return file_was_exact_; }
  // Whether the file had a hole (an unwritten, preallocated range) when
  // opened: its entries must not be read (see open()).
  bool had_holes() const { return had_holes_; }
  const std::filesystem::path& path() const { return path_; }
  // The open file (shared with flush jobs); null once closed.
  const FilePtr& file() const { return file_; }

  const uint8_t* entry(size_t i) const;

  // Appends one entry (entry_size bytes); the file must not be full.
  Status append(const uint8_t* entry);
  // Forgets entries from `n` on (their bytes are overwritten by later appends).
  void truncate_entries(size_t n);
  // Sets the file length to `bytes` rounded down to whole entries, never
  // below entries(), and remaps. A failure at any step leaves a mapping
  // that covers every entry (the index stays readable).
  Status resize(int64_t bytes);
  Status trim() { return resize(int64_t(entries_ * entry_size_)); }
  Status flush();
  // Closes and deletes the file.
  Status remove();
  void close();

 private:
  Status remap(size_t bytes);

  FileSystem* files_ = nullptr;
  std::filesystem::path path_;
  FilePtr file_;
  size_t entry_size_ = 1;
  size_t entries_ = 0;
  std::unique_ptr<FileMapping> mapping_;
  const uint8_t* map_ = nullptr;  // mapping_->data(), cached: no virtual call per probe
  size_t mapped_bytes_ = 0;
  bool file_was_exact_ = true;
  bool had_holes_ = false;
};

}  // namespace samsa

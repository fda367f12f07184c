#pragma once
// OffsetIndex: the sparse `.index` of a segment. Entry (8 bytes, big-endian):
//   int32 relative offset (offset - segment base) | int32 position in .log
// The offset of an entry is the LAST offset of the batch that starts at that
// position (as Kafka writes it). Entries are strictly increasing in both
// fields. Lookups find the greatest entry <= a target, after which the
// segment scans batch headers forward. Format: docs/formats/log-segments.md.

#include <cstdint>
#include <filesystem>
#include <optional>

#include "base/result.h"
#include "model/ids.h"
#include "storage/index_file.h"

namespace samsa {

struct OffsetPosition {
  Offset offset;
  int64_t position = 0;
  bool operator==(const OffsetPosition&) const = default;
};

class OffsetIndex {
 public:
  static constexpr size_t kEntrySize = 8;

  static Result<OffsetIndex> open(FileSystem& files, const std::filesystem::path& path, Offset base, bool truncate);

  Offset base_offset() const { return base_; }
  size_t entries() const { return file_.entries(); }
  bool full() const { return file_.full(); }
  OffsetPosition entry(size_t i) const;
  std::optional<OffsetPosition> last_entry() const;

  // The greatest entry whose offset <= target; {base, 0} if there is none.
  OffsetPosition lookup(Offset target) const;
  // The first entry whose offset >= target, if any (bounds a forward scan).
  std::optional<OffsetPosition> lookup_ceiling(Offset target) const;
  // The last entry with position <= max_position and offset <
  // max_offset_exclusive (every batch before it is whole and within both).
  std::optional<OffsetPosition> floor_entry(int64_t max_position, Offset max_offset_exclusive) const;

  // Appends (offset, position); both must exceed the last entry's and the
  // offset must be within int32 of the base. No-op when full.
  Status append(Offset offset, int64_t position);
  // Drops the entries whose offset >= `offset`.
  void truncate_to(Offset offset);
  void clear() { file_.truncate_entries(0); }

  // Cheap consistency check used when loading after a clean shutdown: whole
  // entries, first/last entries in range and increasing, last position
  // inside a log of `log_size` bytes leaving room for a batch header.
  bool sane(int64_t log_size) const;

  IndexFile& file() { return file_; }

 private:
  size_t upper_bound(Offset target) const;  // first entry with offset > target

  IndexFile file_;
  Offset base_;
};

}  // namespace samsa

#pragma once
// TimeIndex: the sparse `.timeindex` of a segment. Entry (12 bytes, BE):
//   int64 timestamp | int32 relative offset
// Entry (T, O) says: the largest timestamp among the records up to offset O
// is T. Timestamps strictly increase from entry to entry and offsets never
// decrease. A lookup for time t gives the greatest entry with T <= t; the
// first record with timestamp >= t cannot be before the batch holding O.

#include <cstdint>
#include <filesystem>
#include <optional>

#include "base/result.h"
#include "model/ids.h"
#include "storage/batch_check.h"
#include "storage/index_file.h"

namespace samsa {

class TimeIndex {
 public:
  static constexpr size_t kEntrySize = 12;

  static Result<TimeIndex> open(FileSystem& files, const std::filesystem::path& path, Offset base, bool truncate);

  Offset base_offset() const { return base_; }
  size_t entries() const { return file_.entries(); }
  bool full() const { return file_.full(); }
  TimestampOffset entry(size_t i) const;
  std::optional<TimestampOffset> last_entry() const;

  // The greatest entry with timestamp <= target; {-1, base} if none.
  TimestampOffset lookup(int64_t target_ms) const;

  // Appends (timestamp, offset) if timestamp exceeds the last entry's (-1
  // when empty) and the file is not full. `offset` must not be below the last entry's.
  Status maybe_append(int64_t timestamp, Offset offset);
  // Drops the entries whose offset >= `offset`.
  void truncate_to(Offset offset);
  void clear() { file_.truncate_entries(0); }

  // Clean-load check: whole entries, last entry's offset within
  // [base, max_offset], last two entries ordered.
  bool sane(Offset max_offset) const;

  IndexFile& file() { return file_; }

 private:
  IndexFile file_;
  Offset base_;
};

}  // namespace samsa

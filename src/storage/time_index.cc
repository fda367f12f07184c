#include "storage/time_index.h"

#include <limits>

#include "base/bytes.h"

namespace samsa {

Result<TimeIndex> TimeIndex::open(FileSystem& files, const std::filesystem::path& path, Offset base,
                                     bool truncate) {
  TimeIndex idx;
  idx.base_ = base;
  ASSIGN_OR_RETURN(idx.file_, IndexFile::open(files, path, kEntrySize, truncate));
  return idx;
}

TimestampOffset TimeIndex::entry(size_t i) const {
  const uint8_t* p = file_.entry(i);
  return TimestampOffset{int64_t(load_be64(p)), base_ + int64_t(int32_t(load_be32(p + 8)))};
}

std::optional<TimestampOffset> TimeIndex::last_entry() const {
  if (entries() == 0) return std::nullopt;
  return entry(entries() - 1);
}

TimestampOffset TimeIndex::lookup(int64_t target_ms) const {
  size_t lo = 0, hi = entries();
  while (lo < hi) {  // first entry with timestamp > target
    size_t mid = lo + (hi - lo) / 2;
    if (entry(mid).timestamp <= target_ms) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo == 0) return TimestampOffset{-1, base_};
  return entry(lo - 1);
}

Status TimeIndex::maybe_append(int64_t timestamp, Offset offset) {
  int64_t rel = offset - base_;
  ASSERT(rel >= 0 && rel <= std::numeric_limits<int32_t>::max());
  // An empty index behaves as if its last entry were (-1, base), as in
  // Kafka: records without timestamps add nothing.
  auto last = last_entry();
  if (timestamp <= (last ? last->timestamp : -1)) return ok_status();
  if (last) ASSERT(offset >= last->offset);
  if (full()) return ok_status();
  uint8_t e[kEntrySize];
  store_be64(e, uint64_t(timestamp));
  store_be32(e + 8, uint32_t(rel));
  return file_.append(e);
}

void TimeIndex::truncate_to(Offset offset) {
  size_t n = entries();
  while (n > 0 && entry(n - 1).offset >= offset) --n;
  file_.truncate_entries(n);
}

bool TimeIndex::sane(Offset max_offset) const {
  if (!file_.file_was_exact() || file_.had_holes()) return false;
  size_t n = entries();
  if (n == 0) return true;
  TimestampOffset last = entry(n - 1);
  if (last.offset < base_ || last.offset > max_offset) return false;
  if (entry(0).offset < base_) return false;
  if (n >= 2) {
    TimestampOffset prev = entry(n - 2);
    if (!(prev.timestamp < last.timestamp && prev.offset <= last.offset)) return false;
  }
  return true;
}

}  // namespace samsa

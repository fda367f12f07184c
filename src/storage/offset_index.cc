#include "storage/offset_index.h"

#include <limits>

#include "base/bytes.h"
#include "model/record_batch_header.h"

namespace samsa {

Result<OffsetIndex> OffsetIndex::open(FileSystem& files, const std::filesystem::path& path, Offset base,
                                     bool truncate) {
  OffsetIndex idx;
  idx.base_ = base;
  ASSIGN_OR_RETURN(idx.file_, IndexFile::open(files, path, kEntrySize, truncate));
  return idx;
}

OffsetPosition OffsetIndex::entry(size_t i) const {
  const uint8_t* p = file_.entry(i);
  return OffsetPosition{base_ + int64_t(int32_t(load_be32(p))), int64_t(int32_t(load_be32(p + 4)))};
}

std::optional<OffsetPosition> OffsetIndex::last_entry() const {
  if (entries() == 0) return std::nullopt;
  return entry(entries() - 1);
}

size_t OffsetIndex::upper_bound(Offset target) const {
  size_t lo = 0, hi = entries();
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (entry(mid).offset <= target) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

OffsetPosition OffsetIndex::lookup(Offset target) const {
  size_t i = upper_bound(target);
  if (i == 0) return OffsetPosition{base_, 0};
  return entry(i - 1);
}

std::optional<OffsetPosition> OffsetIndex::lookup_ceiling(Offset target) const {
  size_t i = upper_bound(target - 1);
  if (i >= entries()) return std::nullopt;
  return entry(i);
}

std::optional<OffsetPosition> OffsetIndex::floor_entry(int64_t max_position, Offset max_offset_exclusive) const {
  size_t lo = 0, hi = entries();
  while (lo < hi) {  // first entry past either bound (both fields increase)
    size_t mid = lo + (hi - lo) / 2;
    OffsetPosition e = entry(mid);
    if (e.position <= max_position && e.offset < max_offset_exclusive) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo == 0) return std::nullopt;
  return entry(lo - 1);
}

Status OffsetIndex::append(Offset offset, int64_t position) {
  int64_t rel = offset - base_;
  ASSERT(rel >= 0 && rel <= std::numeric_limits<int32_t>::max());
  ASSERT(position >= 0 && position <= std::numeric_limits<int32_t>::max());
  if (auto last = last_entry()) ASSERT(offset > last->offset && position > last->position);
  if (full()) return ok_status();
  uint8_t e[kEntrySize];
  store_be32(e, uint32_t(rel));
  store_be32(e + 4, uint32_t(position));
  return file_.append(e);
}

void OffsetIndex::truncate_to(Offset offset) { file_.truncate_entries(upper_bound(offset - 1)); }

bool OffsetIndex::sane(int64_t log_size) const {
  if (!file_.file_was_exact() || file_.had_holes()) return false;
  size_t n = entries();
  if (n == 0) return true;
  OffsetPosition first = entry(0);
  OffsetPosition last = entry(n - 1);
  if (first.offset < base_ || first.position < 0) return false;
  if (last.position + int64_t(batch_layout::kHeaderSize) > log_size) return false;
  if (n >= 2) {
    OffsetPosition prev = entry(n - 2);
    if (!(prev.offset < last.offset && prev.position < last.position)) return false;
    if (!(first.offset <= prev.offset && first.position <= prev.position)) return false;
  }
  return true;
}

}  // namespace samsa

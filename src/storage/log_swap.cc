// Log::replace_segment and its crash recovery (Log::complete_swap): how a
// cleaned copy of a segment takes the place of the original.
//
// Protocol (each step durable before the next):
//   1. the cleaner writes and fsyncs `<base>.log.cleaned`;
//   2. rename to `<base>.log.swap`, fsync the dir      <- commit point
//   3. unlink `<base>.index` / `<base>.timeindex`
//   4. rename `<base>.log.swap` over `<base>.log`, fsync the dir
//   5. rebuild the indexes from the new .log.
// A crash before 2 leaves a `.cleaned` file, deleted at open (the original
// is intact). A crash after 2 leaves a `.swap`, which open() finishes with
// steps 3-5. Either way every batch the log serves is the original or its
// cleaned copy, never a mix inside a segment.

#include "base/log.h"
#include "storage/log.h"

namespace samsa {

namespace fs = std::filesystem;

Status Log::replace_segment(Offset base, const fs::path& cleaned) {
  if (closed_) return Error(ErrorKind::kClosed, tp_.to_string() + " is closed");
  auto it = segments_.find(base);
  if (it == segments_.end() || std::next(it) == segments_.end()) {
    return Error(ErrorKind::kInvalidArgument, "no inactive segment at " + std::to_string(base.value()));
  }
  ++layout_version_;
  fs::path log_file = Segment::log_path(dir_, base);
  fs::path swap = log_file;
  swap += ".swap";
  Status st = files_.rename(cleaned, swap);
  if (st.ok()) st = files_.sync_dir(dir_);
  if (!st.ok()) return fail(st.error());
  return complete_swap(swap, base, /*reload=*/true);
}

// Steps 3-5 above; also used by open() for a swap left by a crash (the
// segment is then not loaded yet).
Status Log::complete_swap(const fs::path& swap_file, Offset base, bool reload) {
  fs::path log_file = Segment::log_path(dir_, base);
  auto it = segments_.find(base);
  Status st;
  if (it != segments_.end()) {
    st = it->second->remove_index_files();
    segments_.erase(it);  // FileRegions in flight keep the old .log open
  } else {
    st = files_.remove(Segment::index_path(dir_, base));
    if (st.ok()) st = files_.remove(Segment::time_index_path(dir_, base));
  }
  if (st.ok()) st = files_.rename(swap_file, log_file);
  if (st.ok()) st = files_.sync_dir(dir_);
  if (!st.ok()) return fail(st.error());
  if (!reload) return ok_status();  // open(): loaded with the others
  ASSIGN_OR_RETURN(std::unique_ptr<Segment> seg, Segment::open(files_, dir_, base, config_, clock_.wall_ms()));
  if (seg->empty() && !segments_.empty() && segments_.begin()->first < base) {
    LOG_INFO("storage", "{}: cleaned segment {} is empty, removing it", tp_.to_string(), base.value());
    st = seg->remove_files();
    if (!st.ok()) return fail(st.error());
    dir_dirty_ = true;
    return ok_status();
  }
  ASSIGN_OR_RETURN(SegmentRecovery r, seg->recover());
  st = seg->finalize();
  if (st.ok()) st = seg->flush();
  if (!st.ok()) return fail(st.error());
  LOG_DEBUG("storage", "{}: segment {} replaced by its cleaned copy ({} batches, {} bytes)", tp_.to_string(),
            base.value(), r.batches, seg->size());
  segments_[base] = std::move(seg);
  return ok_status();
}

}  // namespace samsa

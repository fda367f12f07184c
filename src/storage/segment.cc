#include "storage/segment.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "model/record_batch_header.h"

namespace samsa {

namespace fs = std::filesystem;
namespace bl = batch_layout;

namespace {
constexpr int64_t kMaxRelative = std::numeric_limits<int32_t>::max();
constexpr size_t kRecoveryBufferBytes = 1 << 20;

// Grows an index file by one entry if it is full (finalize must not lose
// the entry that makes a clean open possible).
Status ensure_room(IndexFile& f) {
  if (!f.full()) return ok_status();
  return f.resize(int64_t((f.entries() + 1) * f.entry_size()));
}
}  // namespace

std::string Segment::file_stem(Offset base) { return fmt::format("{:020d}", base.value()); }
fs::path Segment::log_path(const fs::path& dir, Offset base) { return dir / (file_stem(base) + ".log"); }
fs::path Segment::index_path(const fs::path& dir, Offset base) { return dir / (file_stem(base) + ".index"); }
fs::path Segment::time_index_path(const fs::path& dir, Offset base) {
  return dir / (file_stem(base) + ".timeindex");
}

Segment::Segment(FileSystem& files, fs::path dir, Offset base, int64_t now_ms)
    : files_(files),
      dir_(std::move(dir)),
      base_(base),
      txn_index_(files, txn_index_path(dir_, base)),
      next_offset_(base),
      offset_of_max_timestamp_(base),
      last_batch_last_offset_(base),
      created_ms_(now_ms) {
  log_path_ = log_path(dir_, base_);
}

Segment::~Segment() = default;

Status Segment::open_files(bool truncate) {
  ASSIGN_OR_RETURN(log_file_, files_.open(log_path_, truncate ? OpenMode::kTruncate : OpenMode::kCreate));
  ASSIGN_OR_RETURN(offset_index_, OffsetIndex::open(files_, index_path(dir_, base_), base_, truncate));
  ASSIGN_OR_RETURN(time_index_, TimeIndex::open(files_, time_index_path(dir_, base_), base_, truncate));
  if (truncate) {  // a leftover .txnindex at this base belongs to no batch of the new segment
    ASSIGN_OR_RETURN(bool leftover, files_.exists(txn_index_.path()));
    if (leftover) RETURN_IF_ERROR(files_.remove(txn_index_.path()));
  }
  return txn_index_.load();
}

Result<std::unique_ptr<Segment>> Segment::create(FileSystem& files, const fs::path& dir, Offset base,
                                                 const LogConfig& config, int64_t now_ms) {
  std::unique_ptr<Segment> seg(new Segment(files, dir, base, now_ms));
  RETURN_IF_ERROR(seg->open_files(/*truncate=*/true));
  if (config.preallocate) RETURN_IF_ERROR(seg->file().allocate(config.segment_bytes));
  seg->rolling_timestamp_loaded_ = true;  // set by the first append
  seg->dirty_ = true;
  RETURN_IF_ERROR(seg->make_active(config));
  return seg;
}

Result<std::unique_ptr<Segment>> Segment::open(FileSystem& files, const fs::path& dir, Offset base,
                                               const LogConfig& config, int64_t now_ms) {
  std::unique_ptr<Segment> seg(new Segment(files, dir, base, now_ms));
  seg->index_interval_bytes_ = config.index_interval_bytes;
  RETURN_IF_ERROR(seg->open_files(/*truncate=*/false));
  ASSIGN_OR_RETURN(seg->size_, seg->file().size());
  seg->load_from_indexes();
  return seg;
}

// Clean-open state from the index files only. finalize() left an offset
// index entry for the last batch, so its offset + 1 is the next offset.
void Segment::load_from_indexes() {
  auto fail = [this](const char* why) {
    needs_rebuild_ = true;
    rebuild_reason_ = why;
  };
  if (size_ > kMaxRelative) return fail("log file larger than 2 GiB");
  if (!offset_index_.sane(size_)) return fail("offset index inconsistent");
  if (size_ > 0) {
    auto last = offset_index_.last_entry();
    if (!last) return fail("offset index empty or missing");
    next_offset_ = last->offset + 1;
    last_batch_position_ = last->position;
    last_batch_last_offset_ = last->offset;
    bytes_since_last_index_entry_ = size_ - last->position;
  }
  if (!time_index_.sane(next_offset_ - 1)) return fail("time index inconsistent");
  if (auto t = time_index_.last_entry()) {
    max_timestamp_ = t->timestamp;
    offset_of_max_timestamp_ = t->offset;
  }
}

Result<SegmentRecovery> Segment::recover() {
  offset_index_.clear();
  time_index_.clear();
  return rescan();
}

// Validates and indexes every batch from the first byte to the end of the
// file (the indexes were cleared).
Result<SegmentRecovery> Segment::rescan() {
  SegmentRecovery r;
  // At most one entry per index.interval.bytes, plus the final one.
  int64_t need = size_ / std::max<int64_t>(1, index_interval_bytes_) + 2;
  RETURN_IF_ERROR(offset_index_.file().resize(
      std::max<int64_t>(need * int64_t(OffsetIndex::kEntrySize), int64_t(offset_index_.file().capacity() * 8))));
  RETURN_IF_ERROR(time_index_.file().resize(
      std::max<int64_t>(need * int64_t(TimeIndex::kEntrySize), int64_t(time_index_.file().capacity() * 12))));
  max_timestamp_ = -1;
  offset_of_max_timestamp_ = base_;
  last_batch_position_ = -1;
  bytes_since_last_index_entry_ = 0;
  next_offset_ = base_;
  rolling_timestamp_.reset();
  rolling_timestamp_loaded_ = true;

  BatchScanner scanner(file(), 0, size_, kRecoveryBufferBytes);
  while (true) {
    auto next = scanner.next(/*verify_crc=*/true);
    if (!next.ok()) {
      if (next.error().kind() != ErrorKind::kCorrupt) return next.error();
      r.problem = next.error().message();
      break;
    }
    if (!next->has_value()) break;
    const ScannedBatch& b = **next;
    if (b.frame.base_offset < next_offset_) {
      r.problem = fmt::format("offset {} does not follow {}", b.frame.base_offset.value(), next_offset_.value() - 1);
      scanner.unread(b);  // truncated from its first byte
      break;
    }
    if (b.frame.last_offset - base_ > kMaxRelative || b.position + b.frame.size > kMaxRelative) {
      r.problem = "offsets or size beyond a segment's int32 range";
      scanner.unread(b);
      break;
    }
    if (r.batches == 0) rolling_timestamp_ = b.frame.max_timestamp;
    RETURN_IF_ERROR(index_batch(b));
    ++r.batches;
  }
  int64_t valid_end = r.problem.empty() ? size_ : scanner.position();
  r.bytes_scanned = scanner.bytes_read();
  if (valid_end < size_) {
    RETURN_IF_ERROR(file().truncate(valid_end));
    r.bytes_truncated = size_ - valid_end;
    size_ = valid_end;
  }
  RETURN_IF_ERROR(txn_index_.truncate_to(next_offset_));  // no abort past the recovered end
  needs_rebuild_ = false;
  dirty_ = true;
  return r;
}

Status Segment::index_batch(const ScannedBatch& b) {
  if (b.frame.max_timestamp > max_timestamp_) {
    max_timestamp_ = b.frame.max_timestamp;
    offset_of_max_timestamp_ = b.frame.last_offset;
  }
  if (bytes_since_last_index_entry_ > index_interval_bytes_) {
    RETURN_IF_ERROR(offset_index_.append(b.frame.last_offset, b.position));
    RETURN_IF_ERROR(time_index_.maybe_append(max_timestamp_, offset_of_max_timestamp_));
    bytes_since_last_index_entry_ = 0;
  }
  bytes_since_last_index_entry_ += b.frame.size;
  last_batch_position_ = b.position;
  last_batch_last_offset_ = b.frame.last_offset;
  next_offset_ = b.frame.last_offset + 1;
  return ok_status();
}

std::optional<int64_t> Segment::rolling_timestamp() {
  if (!rolling_timestamp_loaded_) {
    rolling_timestamp_loaded_ = true;
    uint8_t h[bl::kHeaderSize];
    auto n = file().read_at(h, sizeof h, 0);
    if (n.ok() && *n == sizeof h) {
      auto f = parse_batch_frame(ByteView(h, sizeof h));
      if (f.ok()) rolling_timestamp_ = f->max_timestamp;
    }
  }
  return rolling_timestamp_;
}

bool Segment::should_roll(const LogConfig& config, int64_t bytes, Offset last_offset, int64_t max_timestamp_ms,
                          int64_t now_ms) {
  if (size_ == 0) return false;
  if (size_ + bytes > int64_t(config.segment_bytes)) return true;
  if (last_offset - base_ > kMaxRelative) return true;
  // Each batch may add an entry; keep one spare slot for finalize().
  size_t may_add = size_t(bytes / std::max<int64_t>(1, config.index_interval_bytes)) + 2;
  if (offset_index_.entries() + may_add > offset_index_.file().capacity()) return true;
  if (time_index_.entries() + may_add > time_index_.file().capacity()) return true;
  std::optional<int64_t> rolling = rolling_timestamp();
  int64_t waited = (rolling && *rolling >= 0) ? max_timestamp_ms - *rolling : now_ms - created_ms_;
  int64_t jitter = std::min(roll_jitter_ms_, std::max<int64_t>(0, config.segment_jitter_ms));
  return waited > effective_segment_ms(config) - jitter;
}

Status Segment::append(ByteView batches, Offset first, Offset last, int64_t max_timestamp_ms) {
  ASSERT(first >= next_offset_ && last >= first);
  ASSERT(last - base_ <= kMaxRelative && size_ + int64_t(batches.size()) <= kMaxRelative);
  ASSERT_MSG(!torn_, "append before the torn tail was cut");
  const TailState before = tail_state();
  Status st = write_and_index(batches);
  if (!st.ok()) {
    restore(before);
    return st;
  }
  ASSERT(next_offset_ == last + 1);
  if (before.size == 0) {
    rolling_timestamp_ = max_timestamp_ms;
    rolling_timestamp_loaded_ = true;
  }
  return ok_status();
}

Status Segment::write_and_index(ByteView batches) {
  RETURN_IF_ERROR(file().write_at(batches, size_));
  dirty_ = true;
  int64_t position = size_;
  size_ += int64_t(batches.size());
  size_t at = 0;
  while (at < batches.size()) {
    auto frame = parse_batch_frame(batches.subspan(at));
    ASSERT_MSG(frame.ok() && at + size_t(frame->size) <= batches.size(), "append of unvalidated batches");
    RETURN_IF_ERROR(index_batch(ScannedBatch{position + int64_t(at), *frame}));
    at += size_t(frame->size);
  }
  return ok_status();
}

Segment::TailState Segment::tail_state() const {
  return TailState{size_,
                   next_offset_,
                   max_timestamp_,
                   offset_of_max_timestamp_,
                   last_batch_position_,
                   last_batch_last_offset_,
                   bytes_since_last_index_entry_,
                   offset_index_.entries(),
                   time_index_.entries()};
}

// A failed append leaves no trace: the in-memory tail and the index entry
// counts go back to before it, and whatever part of it reached the .log (a
// short write on a full disk) is cut off. Index entries written past the
// restored count are never read and are overwritten by later appends.
void Segment::restore(const TailState& t) {
  size_ = t.size;
  next_offset_ = t.next_offset;
  max_timestamp_ = t.max_timestamp;
  offset_of_max_timestamp_ = t.offset_of_max_timestamp;
  last_batch_position_ = t.last_batch_position;
  last_batch_last_offset_ = t.last_batch_last_offset;
  bytes_since_last_index_entry_ = t.bytes_since_last_index_entry;
  offset_index_.file().truncate_entries(t.offset_entries);
  time_index_.file().truncate_entries(t.time_entries);
  torn_ = true;
  (void)cut_torn_tail();  // if this fails too, the owner retries before the next append
}

Status Segment::cut_torn_tail() {
  if (!torn_) return ok_status();
  RETURN_IF_ERROR(file().truncate(size_));
  torn_ = false;
  return ok_status();
}

Result<std::optional<ScannedBatch>> Segment::translate_offset(Offset target) {
  if (target >= next_offset_) return std::optional<ScannedBatch>();
  OffsetPosition start = offset_index_.lookup(target);
  BatchScanner scanner(file(), start.position, size_);
  while (true) {
    ASSIGN_OR_RETURN(std::optional<ScannedBatch> b, scanner.next(/*verify_crc=*/false));
    if (!b || b->frame.last_offset >= target) return b;
  }
}

Result<FileRegion> Segment::read(const ScannedBatch& first, int32_t max_bytes, Offset upper_bound_exclusive,
                                 bool min_one_message) {
  FileRegion region{log_file_, first.position, 0};
  if (first.frame.last_offset >= upper_bound_exclusive) return region;
  if (first.frame.size > int64_t(max_bytes) && !min_one_message) return region;
  int64_t limit = first.position + std::max<int64_t>(max_bytes, first.frame.size);
  int64_t end = first.position + first.frame.size;
  if (size_ <= limit && next_offset_ <= upper_bound_exclusive) {
    end = size_;  // the rest of the segment qualifies: no scan
  } else {
    // Jump over whole batches with the index, then scan at most about one
    // index interval of headers.
    if (auto e = offset_index_.floor_entry(limit, upper_bound_exclusive); e && e->position > end) end = e->position;
    BatchScanner scanner(file(), end, size_);
    while (true) {
      auto b = scanner.next(/*verify_crc=*/false);
      if (!b.ok()) {
        if (b.error().kind() == ErrorKind::kCorrupt) break;  // serve the valid prefix
        return b.error();
      }
      if (!b->has_value()) break;
      const ScannedBatch& s = **b;
      if (s.frame.last_offset >= upper_bound_exclusive || s.position + s.frame.size > limit) break;
      end = s.position + s.frame.size;
    }
  }
  region.size = int32_t(end - first.position);
  return region;
}

Result<std::optional<TimestampOffset>> Segment::find_offset_by_timestamp(int64_t target_ms) {
  if (max_timestamp_ < target_ms) return std::optional<TimestampOffset>();
  TimestampOffset t = time_index_.lookup(target_ms);
  int64_t start = offset_index_.lookup(t.offset).position;
  BatchScanner scanner(file(), start, size_);
  while (true) {
    ASSIGN_OR_RETURN(std::optional<ScannedBatch> b, scanner.next(/*verify_crc=*/false));
    if (!b) return std::optional<TimestampOffset>();
    if (b->frame.max_timestamp < target_ms) continue;
    Bytes batch(size_t(b->frame.size));
    ASSIGN_OR_RETURN(size_t n, file().read_at(batch.data(), batch.size(), b->position));
    TimestampOffset whole{b->frame.max_timestamp, b->frame.base_offset};
    if (n != batch.size()) return std::optional<TimestampOffset>(whole);
    std::optional<TimestampOffset> found = find_timestamp_in_batch(batch, target_ms);
    return std::optional<TimestampOffset>(found ? *found : whole);
  }
}

Status Segment::make_active(const LogConfig& config) {
  index_interval_bytes_ = config.index_interval_bytes;
  RETURN_IF_ERROR(offset_index_.file().resize(config.segment_index_bytes));
  return time_index_.file().resize(config.segment_index_bytes);
}

Status Segment::finalize() {
  if (last_batch_position_ >= 0) {
    auto last = offset_index_.last_entry();
    if (!last || last->position < last_batch_position_) {
      RETURN_IF_ERROR(ensure_room(offset_index_.file()));
      RETURN_IF_ERROR(offset_index_.append(last_batch_last_offset_, last_batch_position_));
      dirty_ = true;
    }
    auto last_time = time_index_.last_entry();
    if (max_timestamp_ > (last_time ? last_time->timestamp : -1)) {
      RETURN_IF_ERROR(ensure_room(time_index_.file()));
      RETURN_IF_ERROR(time_index_.maybe_append(max_timestamp_, offset_of_max_timestamp_));
      dirty_ = true;
    }
  }
  RETURN_IF_ERROR(offset_index_.file().trim());
  RETURN_IF_ERROR(time_index_.file().trim());
  ASSIGN_OR_RETURN(int64_t file_bytes, file().size());
  if (file_bytes > size_) {  // preallocated, or the torn tail of a failed append
    RETURN_IF_ERROR(file().truncate(size_));
    dirty_ = true;
  }
  torn_ = false;
  return ok_status();
}

Status Segment::flush() {
  if (!dirty_) return ok_status();
  RETURN_IF_ERROR(file().sync());
  RETURN_IF_ERROR(offset_index_.file().flush());
  RETURN_IF_ERROR(time_index_.file().flush());
  if (FilePtr txn = txn_index_.file_to_flush()) RETURN_IF_ERROR(txn->sync());
  txn_index_.mark_flushed();
  dirty_ = false;
  return ok_status();
}

std::vector<FilePtr> Segment::files_to_flush() {
  if (!dirty_ || !log_file_) return {};
  std::vector<FilePtr> files{log_file_};
  for (IndexFile* index : {&offset_index_.file(), &time_index_.file()}) {
    if (index->file()) files.push_back(index->file());
  }
  if (FilePtr txn = txn_index_.file_to_flush()) files.push_back(txn);
  return files;
}

Result<int64_t> Segment::truncate_to(Offset offset) {
  ASSIGN_OR_RETURN(std::optional<ScannedBatch> b, translate_offset(offset));
  if (!b) return int64_t(0);
  int64_t removed = size_ - b->position;
  RETURN_IF_ERROR(file().truncate(b->position));
  size_ = b->position;
  next_offset_ = b->frame.base_offset;
  offset_index_.truncate_to(next_offset_);
  time_index_.truncate_to(next_offset_);
  RETURN_IF_ERROR(txn_index_.truncate_to(next_offset_));
  dirty_ = true;
  RETURN_IF_ERROR(rescan_tail());
  return removed;
}

// Re-derives the in-memory tail state (last batch, max timestamp) after a
// truncation: scans from the last index entry, about one index interval.
Status Segment::rescan_tail() {
  auto last = offset_index_.last_entry();
  int64_t from = last ? last->position : 0;
  auto t = time_index_.last_entry();
  max_timestamp_ = t ? t->timestamp : -1;
  offset_of_max_timestamp_ = t ? t->offset : base_;
  last_batch_position_ = -1;
  last_batch_last_offset_ = base_;
  BatchScanner scanner(file(), from, size_);
  while (true) {
    ASSIGN_OR_RETURN(std::optional<ScannedBatch> b, scanner.next(/*verify_crc=*/false));
    if (!b) break;
    if (b->frame.max_timestamp > max_timestamp_) {
      max_timestamp_ = b->frame.max_timestamp;
      offset_of_max_timestamp_ = b->frame.last_offset;
    }
    last_batch_position_ = b->position;
    last_batch_last_offset_ = b->frame.last_offset;
  }
  bytes_since_last_index_entry_ = size_ - from;
  rolling_timestamp_.reset();
  rolling_timestamp_loaded_ = size_ == 0;
  return ok_status();
}

Result<std::vector<fs::path>> Segment::rename_for_deletion() {
  std::vector<fs::path> out;
  std::vector<fs::path> paths{index_path(dir_, base_), time_index_path(dir_, base_), log_path_};
  if (txn_index_.has_file()) paths.push_back(txn_index_.path());
  for (const fs::path& p : paths) {
    fs::path doomed = p;
    doomed += ".deleted";
    RETURN_IF_ERROR(files_.rename(p, doomed));
    out.push_back(doomed);
  }
  offset_index_.file().close();
  time_index_.file().close();
  txn_index_.close();
  log_file_.reset();  // outstanding FileRegions keep the file open
  return out;
}

int64_t Segment::last_modified_ms() const {
  if (!log_file_) return 0;
  auto ms = log_file_->modified_ms();
  return ms.ok() ? *ms : 0;
}

Status Segment::append_aborted_txn(const AbortedTxn& txn) {
  ASSERT(txn.last_offset >= base_ && txn.last_offset < next_offset_);  // the marker is in this segment
  dirty_ = true;
  return txn_index_.append(txn);
}

Status Segment::remove_index_files() {
  RETURN_IF_ERROR(offset_index_.file().remove());
  return time_index_.file().remove();
}

Status Segment::remove_files() {
  RETURN_IF_ERROR(offset_index_.file().remove());
  RETURN_IF_ERROR(time_index_.file().remove());
  if (txn_index_.has_file()) {
    txn_index_.close();
    RETURN_IF_ERROR(files_.remove(txn_index_.path()));
  }
  log_file_.reset();  // outstanding FileRegions keep the file open
  return files_.remove(log_path_);
}

}  // namespace samsa

#include "storage/log_cleaner.h"

#include <algorithm>
#include <optional>

#include "base/file_region.h"
#include "base/log.h"
#include "model/record.h"
#include "model/record_batch.h"
#include "model/record_batch_builder.h"
#include "model/record_batch_header.h"
#include "storage/batch_check.h"
#include "storage/log.h"

namespace samsa {

namespace fs = std::filesystem;
namespace bl = batch_layout;

namespace {
constexpr int64_t kMaxBatchBytes = 64 << 20;    // larger "batches" in a segment are corrupt
constexpr size_t kWriteBufferBytes = 1 << 20;
constexpr int64_t kMapEntryOverhead = 48;       // rough per-key cost of the hash map

// Reads and CRC-checks the whole batch at `pos` of a segment of `end` bytes.
Result<BatchFrame> read_batch(const File& file, int64_t pos, int64_t end, Bytes& buf) {
  uint8_t h[bl::kHeaderSize];
  if (end - pos < int64_t(sizeof h)) return Error(ErrorKind::kCorrupt, "partial batch header");
  ASSIGN_OR_RETURN(size_t n, file.read_at(h, sizeof h, pos));
  if (n != sizeof h) return Error(ErrorKind::kCorrupt, "short read of a batch header");
  ASSIGN_OR_RETURN(BatchFrame frame, parse_batch_frame(ByteView(h, sizeof h)));
  if (frame.size > end - pos || frame.size > kMaxBatchBytes) {
    return Error(ErrorKind::kCorrupt, "batch length runs past the segment");
  }
  buf.resize(size_t(frame.size));
  ASSIGN_OR_RETURN(n, file.read_at(buf.data(), buf.size(), pos));
  if (n != buf.size()) return Error(ErrorKind::kCorrupt, "short read of a batch");
  RETURN_IF_ERROR(check_batch(buf));
  return frame;
}

std::string key_string(ByteView key) { return std::string(reinterpret_cast<const char*>(key.data()), key.size()); }

// The segment's open .log, which the cleaner reads through.
Result<const File*> segment_file(const Segment& seg) {
  if (!seg.log_file()) return Error(ErrorKind::kNotFound, "segment closed: " + seg.log_file_path().string());
  return seg.log_file().get();
}
}  // namespace

struct LogCleaner::Pass {
  enum class Phase { kMap, kRewrite };
  TopicPartition tp;
  uint64_t layout_version = 0;
  Offset first_dirty;
  Offset end_dirty;
  int64_t now_wall_ms = 0;
  Phase phase = Phase::kMap;
  std::unordered_map<std::string, int64_t> latest;  // key -> offset of its last record
  int64_t map_bytes = 0;
  // Cursor: the segment being read (by base offset) and the position in it.
  std::optional<Offset> segment;
  int64_t position = 0;
  FileSystem* files = nullptr;  // the log's
  // Rewrite output of the current segment.
  FilePtr out;
  fs::path out_path;
  Bytes out_buf;
  int64_t out_size = 0;
  bool changed = false;
  int64_t removed = 0;
  Bytes batch;
};

LogCleaner::LogCleaner(CleanerConfig config) : config_(config) {}

LogCleaner::~LogCleaner() { abort(); }

void LogCleaner::forget(const TopicPartition& tp) {
  checkpoints_.erase(tp);
  if (pass_ && pass_->tp == tp) abort();
}

void LogCleaner::abort() {
  if (!pass_) return;
  if (pass_->out) {
    pass_->out.reset();
    (void)pass_->files->remove(pass_->out_path);
  }
  pass_.reset();
}

void LogCleaner::abandon(const std::string& why) {
  LOG_WARN("cleaner", "{}: abandoning compaction pass: {}", pass_->tp.to_string(), why);
  last_error_ = why;
  ++stats_.passes_abandoned;
  abort();
}

LogCleaner::Cleanability LogCleaner::cleanability(Log& log, int64_t now_wall_ms) const {
  const LogConfig& cfg = log.config();
  Cleanability c;
  c.first_dirty = log.log_start_offset();
  if (auto it = checkpoints_.find(log.topic_partition()); it != checkpoints_.end()) {
    // A checkpoint beyond the log end means the log was truncated: all dirty.
    if (it->second <= log.log_end_offset()) c.first_dirty = std::max(c.first_dirty, it->second);
  }
  const auto& segs = log.segments();
  c.end_dirty = segs.rbegin()->first;  // the active segment is never cleaned
  for (const auto& [base, seg] : segs) {
    if (base >= c.end_dirty) break;
    if (cfg.min_compaction_lag_ms > 0 && seg->max_timestamp() > now_wall_ms - cfg.min_compaction_lag_ms) {
      c.end_dirty = base;  // too young, and so is everything after it
      break;
    }
  }
  bool first_dirty_segment = true;
  for (const auto& [base, seg] : segs) {
    if (base >= c.end_dirty) break;
    if (seg->next_offset() <= c.first_dirty) {
      c.clean_bytes += seg->size();
      continue;
    }
    c.dirty_bytes += seg->size();
    if (first_dirty_segment && cfg.max_compaction_lag_ms != kInt64Max && !seg->empty()) {
      std::optional<int64_t> ts = seg->first_batch_timestamp();
      int64_t t = (ts && *ts >= 0) ? *ts : seg->created_ms();
      c.lag_exceeded = now_wall_ms - t > cfg.max_compaction_lag_ms;
    }
    first_dirty_segment = false;
  }
  return c;
}

bool LogCleaner::start_pass(const std::vector<Log*>& logs, int64_t now_wall_ms) {
  Log* best = nullptr;
  Cleanability best_c;
  double best_score = -1;
  for (Log* log : logs) {
    if (!log->config().cleanup_policy.compact || log->offline() || log->segments().empty()) continue;
    Cleanability c = cleanability(*log, now_wall_ms);
    if (c.dirty_bytes == 0) continue;
    if (c.ratio() < log->config().min_cleanable_dirty_ratio && !c.lag_exceeded) continue;
    double score = c.lag_exceeded ? 2.0 + c.ratio() : c.ratio();
    if (score > best_score) {
      best = log;
      best_c = c;
      best_score = score;
    }
  }
  if (!best) return false;
  pass_ = std::make_unique<Pass>();
  pass_->tp = best->topic_partition();
  pass_->files = &best->files();
  pass_->layout_version = best->layout_version();
  pass_->first_dirty = best_c.first_dirty;
  pass_->end_dirty = best_c.end_dirty;
  pass_->now_wall_ms = now_wall_ms;
  const auto& segs = best->segments();
  auto it = segs.upper_bound(best_c.first_dirty);
  if (it != segs.begin()) --it;
  pass_->segment = it->first;
  LOG_INFO("cleaner", "{}: cleaning [{}, {}), dirty ratio {:.2f}{}", pass_->tp.to_string(),
           best_c.first_dirty.value(), best_c.end_dirty.value(), best_c.ratio(),
           best_c.lag_exceeded ? " (max.compaction.lag.ms exceeded)" : "");
  return true;
}

bool LogCleaner::step(const std::vector<Log*>& logs, const LogLookup& lookup, int64_t now_wall_ms,
                      int64_t now_mono_ms) {
  if (!config_.enable) return false;
  if (!pass_) {
    if (now_mono_ms < next_scan_mono_ms_) return false;
    if (!start_pass(logs, now_wall_ms)) {
      next_scan_mono_ms_ = now_mono_ms + config_.backoff_ms;
      return false;
    }
  }
  Log* log = lookup(pass_->tp);
  if (log == nullptr || log->offline() || log->layout_version() != pass_->layout_version) {
    abandon("the log changed under the cleaner");
    return true;
  }
  int64_t budget = config_.budget_bytes_per_step;
  Status st;
  if (pass_->phase == Pass::Phase::kMap) st = build_map(*log, budget);
  if (st.ok() && pass_ && pass_->phase == Pass::Phase::kRewrite) st = rewrite(*log, budget);
  if (!st.ok() && pass_) abandon(st.error().to_string());
  return true;
}

Status LogCleaner::clean_all(const std::vector<Log*>& logs, const LogLookup& lookup, int64_t now_wall_ms) {
  next_scan_mono_ms_ = 0;
  last_error_.clear();
  for (int guard = 0; guard < 1000000; ++guard) {
    if (!step(logs, lookup, now_wall_ms, 0)) return ok_status();
    next_scan_mono_ms_ = 0;
    if (!last_error_.empty() && !pass_) return Error(ErrorKind::kCorrupt, last_error_);
  }
  return Error(ErrorKind::kTimedOut, "cleaner did not converge");
}

// Phase 2: key -> latest offset over [first_dirty, end_dirty).
Status LogCleaner::build_map(Log& log, int64_t& budget) {
  Pass& p = *pass_;
  const auto& segs = log.segments();
  while (true) {
    auto it = segs.find(*p.segment);
    if (it == segs.end()) return Error(ErrorKind::kNotFound, "segment vanished");
    if (it->first >= p.end_dirty) break;
    if (budget <= 0) return ok_status();  // resume at this segment
    if (p.position == 0 && it->first > p.first_dirty && p.map_bytes > config_.map_max_bytes) {
      p.end_dirty = it->first;  // map full: this pass stops before this segment
      break;
    }
    Segment& seg = *it->second;
    ASSIGN_OR_RETURN(const File* file, segment_file(seg));
    while (budget > 0 && p.position < seg.size()) {
      ASSIGN_OR_RETURN(BatchFrame frame, read_batch(*file, p.position, seg.size(), p.batch));
      p.position += frame.size;
      budget -= frame.size;
      stats_.bytes_read += frame.size;
      RecordBatchHeader h(p.batch.data());
      if (h.is_control() || frame.last_offset < p.first_dirty) continue;
      ASSIGN_OR_RETURN(RecordIterator records, RecordIterator::open(p.batch));
      Record r;
      while (records.next(r)) {
        Offset o = h.base_offset() + r.offset_delta;
        if (!r.key || o < p.first_dirty) continue;
        auto [entry, inserted] = p.latest.try_emplace(key_string(*r.key), o.value());
        if (inserted) {
          p.map_bytes += int64_t(r.key->size()) + kMapEntryOverhead;
        } else {
          entry->second = o.value();
        }
      }
      RETURN_IF_ERROR(records.status());
    }
    if (p.position < seg.size()) return ok_status();  // budget spent; resume here
    auto next = std::next(it);
    p.position = 0;
    if (next == segs.end() || next->first >= p.end_dirty) break;
    p.segment = next->first;
  }
  p.phase = Pass::Phase::kRewrite;
  p.segment = segs.begin()->first;
  p.position = 0;
  return ok_status();
}

namespace {
// Re-encodes `batch` with only `kept` records, keeping its base offset,
// lastOffsetDelta, producer fields, codec and timestamp type.
Result<Bytes> rebuild_batch(ByteView batch, const std::vector<const Record*>& kept) {
  RecordBatchHeader h(batch.data());
  RecordBatchOptions o;
  o.compression = h.compression();
  o.base_offset = h.base_offset();
  o.partition_leader_epoch = h.partition_leader_epoch();
  o.producer_id = h.producer_id();
  o.producer_epoch = h.producer_epoch();
  o.base_sequence = h.base_sequence();
  o.transactional = h.is_transactional();
  if (h.log_append_time()) o.log_append_time_ms = h.max_timestamp();
  RecordBatchBuilder b(o);
  std::vector<RecordHeader> headers;
  for (const Record* r : kept) {
    headers.clear();
    RecordHeader rh;
    for (auto hi = r->headers(); hi.next(rh);) headers.push_back(rh);
    b.add_with_offset_delta(r->offset_delta, r->timestamp(h), r->key, r->value, headers);
  }
  ASSIGN_OR_RETURN(Bytes out, b.build());
  // Offsets never move: the batch still ends where it ended.
  store_be32(out.data() + bl::kLastOffsetDelta, uint32_t(h.last_offset_delta()));
  store_be32(out.data() + bl::kCrc, compute_batch_crc(out));
  return out;
}
}  // namespace

// Phase 3: copy every segment below end_dirty, dropping superseded records.
Status LogCleaner::rewrite(Log& log, int64_t& budget) {
  Pass& p = *pass_;
  const auto& segs = log.segments();
  const int64_t delete_retention_ms = log.config().delete_retention_ms;
  std::vector<Record> records;
  std::vector<const Record*> kept;
  while (budget > 0) {
    auto it = segs.find(*p.segment);
    if (it == segs.end()) return Error(ErrorKind::kNotFound, "segment vanished");
    Segment& seg = *it->second;
    if (!p.out) {
      p.out_path = seg.log_file_path();
      p.out_path += ".cleaned";
      ASSIGN_OR_RETURN(p.out, p.files->open(p.out_path, OpenMode::kTruncate));
      p.out_size = 0;
      p.changed = false;
      p.removed = 0;
    }
    ASSIGN_OR_RETURN(const File* file, segment_file(seg));
    while (budget > 0 && p.position < seg.size()) {
      ASSIGN_OR_RETURN(BatchFrame frame, read_batch(*file, p.position, seg.size(), p.batch));
      p.position += frame.size;
      budget -= frame.size;
      stats_.bytes_read += frame.size;
      RecordBatchHeader h(p.batch.data());
      bool keep_whole = h.is_control();
      std::optional<Bytes> rebuilt;
      if (!keep_whole) {
        ASSIGN_OR_RETURN(RecordIterator it_records, RecordIterator::open(p.batch));
        records.clear();
        kept.clear();
        for (Record r; it_records.next(r);) records.push_back(r);
        RETURN_IF_ERROR(it_records.status());
        for (const Record& r : records) {
          Offset o = h.base_offset() + r.offset_delta;
          bool keep = true;
          if (r.key) {
            auto m = p.latest.find(key_string(*r.key));
            if (m != p.latest.end() && m->second > o.value()) keep = false;  // superseded
            int64_t ts = h.log_append_time() ? h.max_timestamp() : r.timestamp(h);
            if (keep && !r.value && p.now_wall_ms - ts > delete_retention_ms) keep = false;  // old tombstone
          }
          if (keep) kept.push_back(&r);
        }
        keep_whole = kept.size() == records.size();
        p.removed += int64_t(records.size() - kept.size());
        if (!keep_whole && !kept.empty()) {
          ASSIGN_OR_RETURN(Bytes b, rebuild_batch(p.batch, kept));
          rebuilt = std::move(b);
        }
      }
      if (!keep_whole) p.changed = true;
      const Bytes* out = keep_whole ? &p.batch : rebuilt ? &*rebuilt : nullptr;
      if (out) {
        p.out_buf.insert(p.out_buf.end(), out->begin(), out->end());
        if (p.out_buf.size() >= kWriteBufferBytes) {
          RETURN_IF_ERROR(p.out->write_at(p.out_buf, p.out_size));
          p.out_size += int64_t(p.out_buf.size());
          stats_.bytes_written += int64_t(p.out_buf.size());
          p.out_buf.clear();
        }
      }
    }
    if (p.position < seg.size()) return ok_status();  // budget spent; resume here
    RETURN_IF_ERROR(finish_segment(log));
    auto next = segs.upper_bound(*p.segment);
    p.position = 0;
    if (next == segs.end() || next->first >= p.end_dirty) {
      p.segment.reset();
      break;
    }
    p.segment = next->first;
  }
  if (p.segment) return ok_status();
  checkpoints_[p.tp] = p.end_dirty;
  ++stats_.passes_completed;
  LOG_INFO("cleaner", "{}: cleaned up to offset {}", p.tp.to_string(), p.end_dirty.value());
  pass_.reset();
  return ok_status();
}

// The current segment's copy is complete: swap it in if anything changed.
Status LogCleaner::finish_segment(Log& log) {
  Pass& p = *pass_;
  if (!p.changed) {
    p.out.reset();
    p.out_buf.clear();
    return p.files->remove(p.out_path);
  }
  if (!p.out_buf.empty()) {
    RETURN_IF_ERROR(p.out->write_at(p.out_buf, p.out_size));
    p.out_size += int64_t(p.out_buf.size());
    stats_.bytes_written += int64_t(p.out_buf.size());
    p.out_buf.clear();
  }
  RETURN_IF_ERROR(p.out->sync());
  p.out.reset();
  Status swapped = log.replace_segment(*p.segment, p.out_path);
  if (!swapped.ok()) {
    (void)p.files->remove(p.out_path);
    return swapped;
  }
  p.layout_version = log.layout_version();
  stats_.records_removed += p.removed;
  ++stats_.segments_replaced;
  return ok_status();
}

}  // namespace samsa

// Log::load: opening a partition directory and crash recovery.
//
// Clean shutdown: segments are opened from their index files and sizes
// only; a segment whose indexes are missing or inconsistent is scanned and
// re-indexed (its later segments are kept while it scans whole).
// Unclean: every segment from the one holding the recovery point to the end
// is scanned from its FIRST byte, batch by batch (length, magic 2, CRC-32C,
// increasing offsets), and re-indexed; the first invalid byte ends the log:
// that segment is truncated there and all later segments are deleted.
// Either way, a segment that loses bytes when scanned, or (scanned or not)
// ends short of its successor, ends the log there: keeping what follows would leave a hole
// that the next unclean start (which scans from the recovery point) closes
// by deleting it, with whatever was appended since (fuzz_log_recovery's
// crash-hole-below-the-recovery-point: offset 2 acknowledged, then gone).
// As Kafka: segments wholly below the recovery point are trusted (they
// were fsynced), but the segment holding it is verified whole, also below
// the recovery point, because the active segment is always among the
// verified ones: nothing is ever appended after a batch that this start
// did not check (a bad batch below the recovery point of the active
// segment would otherwise be served and appended after).

#include <algorithm>
#include <cctype>
#include <set>
#include <string>

#include "base/log.h"
#include "storage/log.h"
#include "storage/partition_metadata.h"
#include "storage/producer_snapshot.h"

namespace samsa {

namespace fs = std::filesystem;

namespace {

bool has_suffix(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// "00000000000000000042.log" -> 42 (exactly 20 digits before the dot).
std::optional<Offset> parse_segment_name(const std::string& name, std::string_view ext) {
  if (name.size() != 20 + ext.size() || !has_suffix(name, ext)) return std::nullopt;
  int64_t v = 0;
  for (size_t i = 0; i < 20; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return std::nullopt;
    if (v > (INT64_MAX - 9) / 10) return std::nullopt;
    v = v * 10 + (name[i] - '0');
  }
  return Offset(v);
}

}  // namespace

// The base offsets of the .log files; removes orphan index files and
// leftovers of interrupted file swaps.
Result<std::vector<Offset>> Log::scan_dir() {
  std::vector<Offset> bases;
  std::vector<fs::path> orphans;
  std::vector<std::pair<fs::path, Offset>> swaps;
  ASSIGN_OR_RETURN(std::vector<DirEntry> entries, files_.list(dir_));
  std::set<std::string> names;
  for (const DirEntry& entry : entries) {
    if (!entry.is_directory) names.insert(entry.name);
  }
  for (const std::string& name : names) {
    fs::path path = dir_ / name;
    if (has_suffix(name, ".log.swap")) {  // a committed cleaner swap (log_swap.cc)
      if (auto base = parse_segment_name(name.substr(0, name.size() - 5), ".log")) {
        swaps.emplace_back(path, *base);
        continue;
      }
    }
    if (auto base = parse_segment_name(name, ".log")) {
      bases.push_back(*base);
      continue;
    }
    if (auto at = parse_segment_name(name, kProducerSnapshotSuffix)) {
      snapshots_.insert(*at);
      continue;
    }
    for (std::string_view ext : {".index", ".timeindex", ".txnindex"}) {
      auto base = parse_segment_name(name, ext);
      if (base && !names.count(Segment::log_path(dir_, *base).filename().string())) orphans.push_back(path);
    }
    if (has_suffix(name, ".deleted") || has_suffix(name, ".cleaned") || has_suffix(name, ".swap")) {
      orphans.push_back(path);
    }
  }
  for (const auto& [path, base] : swaps) {
    LOG_WARN("storage", "{}: completing interrupted swap of cleaned segment {}", tp_.to_string(), base.value());
    RETURN_IF_ERROR(complete_swap(path, base, /*reload=*/false));
    if (std::find(bases.begin(), bases.end(), base) == bases.end()) bases.push_back(base);
    // The swap removed its segment's index files (and may have replaced an
    // orphan's .log): drop what is gone from the list.
    orphans.erase(std::remove_if(orphans.begin(), orphans.end(),
                                 [&](const fs::path& p) {
                                   auto there = files_.exists(p);
                                   return there.ok() && !*there;
                                 }),
                  orphans.end());
  }
  for (const auto& p : orphans) {
    LOG_WARN("storage", "{}: removing stray file {}", tp_.to_string(), p.filename().string());
    RETURN_IF_ERROR(files_.remove(p));
  }
  std::sort(bases.begin(), bases.end());
  return bases;
}

Status Log::recover_segment(Segment& seg, const char* why) {
  ASSIGN_OR_RETURN(SegmentRecovery r, seg.recover());
  ++load_stats_.segments_recovered;
  load_stats_.bytes_scanned += r.bytes_scanned;
  load_stats_.bytes_truncated += r.bytes_truncated;
  if (r.bytes_truncated > 0) {
    LOG_WARN("storage", "{}: segment {} ({}): {} valid batches, truncated {} invalid bytes at position {}: {}",
             tp_.to_string(), seg.base_offset().value(), why, r.batches, r.bytes_truncated, seg.size(), r.problem);
  } else {
    LOG_INFO("storage", "{}: segment {} recovered ({}): {} batches, {} bytes", tp_.to_string(),
             seg.base_offset().value(), why, r.batches, r.bytes_scanned);
  }
  return ok_status();
}

// A segment is rolled at the log end, so the next one starts where it ended.
// After a crash a segment can end short of its successor's base even with no
// torn bytes: its unsynced tail was lost while the successor's writes reached
// the disk (the kernel writes files back in no particular order). Serving
// the successor would leave a hole in the offsets; it is dropped instead
// (it holds only records above the recovery point, which a crash may lose).
// A compacted log has such holes by design (the cleaner removes a segment's
// last records), so it is left as it is.
bool Log::ends_before_next_segment(SegmentMap::const_iterator it) const {
  auto next = std::next(it);
  if (next == segments_.end() || config_.cleanup_policy.compact) return false;
  const Offset end = it->second->next_offset();
  if (end >= next->first) return false;
  LOG_WARN("storage", "{}: segment {} ends at {} but segment {} follows it: offsets {}-{} were lost in the crash",
           tp_.to_string(), it->first.value(), end.value(), next->first.value(), end.value(), next->first.value() - 1);
  return true;
}

Status Log::drop_segments_after(Offset base) {
  while (segments_.rbegin()->first > base) {
    auto last = std::prev(segments_.end());
    LOG_WARN("storage", "{}: deleting segment {} ({} bytes) after an invalid tail", tp_.to_string(),
             last->first.value(), last->second->size());
    RETURN_IF_ERROR(last->second->remove_files());
    segments_.erase(last);
    ++load_stats_.segments_dropped;
  }
  return ok_status();
}

// A malformed partition.metadata counts as none: the log manager then
// treats the dir as one of unknown topic (never adopted unless the metadata
// assigns its name here; see LogManager::remove_stray_logs).
void Log::load_topic_id() {
  auto id = read_partition_metadata(files_, dir_);
  if (id.ok()) {
    topic_id_ = *id;
    return;
  }
  LOG_WARN("storage", "{}: ignoring partition.metadata: {}", tp_.to_string(), id.error().to_string());
}

Status Log::load(const RecoveryOptions& options) {
  ASSIGN_OR_RETURN(std::vector<Offset> bases, scan_dir());
  load_topic_id();
  for (Offset base : bases) {
    ASSIGN_OR_RETURN(std::unique_ptr<Segment> seg, Segment::open(files_, dir_, base, config_, clock_.wall_ms()));
    segments_[base] = std::move(seg);
    ++load_stats_.segments_loaded;
  }
  // Without a clean shutdown, everything from the segment holding the
  // recovery point on is scanned; before it (and everywhere after a clean
  // shutdown) only segments whose index files cannot be trusted are.
  auto scan_from = segments_.end();
  if (!options.had_clean_shutdown && !segments_.empty()) {
    scan_from = segments_.upper_bound(options.recovery_point);
    if (scan_from != segments_.begin()) --scan_from;
  }
  for (auto it = segments_.begin(); it != segments_.end(); ++it) {
    const bool unclean = scan_from != segments_.end() && it->first >= scan_from->first;
    int64_t truncated_before = load_stats_.bytes_truncated;
    if (unclean || it->second->needs_rebuild()) {
      RETURN_IF_ERROR(recover_segment(*it->second, unclean ? "unclean shutdown" : it->second->rebuild_reason().c_str()));
    }
    if (load_stats_.bytes_truncated > truncated_before || ends_before_next_segment(it)) {
      RETURN_IF_ERROR(drop_segments_after(it->first));
      break;
    }
  }
  if (segments_.empty()) RETURN_IF_ERROR(add_segment(options.log_start_offset));
  log_end_ = active().next_offset();
  if (options.had_clean_shutdown && options.recovery_point > log_end_) {
    // The checkpoint says more was flushed than the indexes show: scan.
    RETURN_IF_ERROR(recover_segment(active(), "recovery point beyond the indexed end"));
    log_end_ = active().next_offset();
  }
  log_start_ = std::max(options.log_start_offset, segments_.begin()->first);
  if (log_start_ > log_end_) {
    LOG_WARN("storage", "{}: log start offset {} beyond log end {}: starting empty there", tp_.to_string(),
             log_start_.value(), log_end_.value());
    RETURN_IF_ERROR(truncate_fully_and_start_at(log_start_));
  }
  epochs_ = LeaderEpochCache::load(files_, dir_);
  RETURN_IF_ERROR(load_producer_state());
  // On a full disk the trimmed checkpoint may not be written: the cache in
  // memory is trimmed all the same, and the file keeps only entries beyond
  // the log's ends, which the next open trims again. A full disk must not
  // keep the log from opening (it serves reads; appends wait for space).
  for (Status trimmed : {epochs_->truncate_from_end(log_end_), epochs_->truncate_from_start(log_start_)}) {
    if (trimmed.ok()) continue;
    if (trimmed.error().kind() != ErrorKind::kNoSpace) return trimmed.error();
    LOG_WARN("storage", "{}: leader-epoch-checkpoint not rewritten: {}", tp_.to_string(), trimmed.error().to_string());
  }
  // Only the last segment stays open for appends; the others are trimmed.
  for (auto& [base, seg] : segments_) {
    if (seg.get() != &active()) RETURN_IF_ERROR(seg->finalize());
  }
  RETURN_IF_ERROR(active().make_active(config_));
  if (load_stats_.segments_recovered > 0 || !options.had_clean_shutdown) {
    recovery_point_ = std::min(options.recovery_point, log_end_);
    RETURN_IF_ERROR(flush());  // recovered data and indexes become the new recovery point
  } else {
    recovery_point_ = log_end_;
  }
  // Everything is durable now: a snapshot at the end saves the next open
  // the replay just done (after a crash, or a log without snapshots yet).
  if (load_stats_.producer_state_bytes_read > 0) write_durable_snapshot("after the replay at open");
  LOG_INFO("storage", "{}: loaded {} segments, log [{}, {}), {} bytes scanned", tp_.to_string(),
           segments_.size(), log_start_.value(), log_end_.value(), load_stats_.bytes_scanned);
  return ok_status();
}

}  // namespace samsa

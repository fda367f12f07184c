#include "storage/leader_epoch_cache.h"

#include <charconv>

#include "base/log.h"
#include "storage/file_util.h"

namespace samsa {

namespace {
constexpr size_t kMaxFileBytes = 16 << 20;

template <typename T>
bool parse_int(std::string_view s, T& out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

Error corrupt(const std::string& why) { return Error(ErrorKind::kCorrupt, "leader-epoch-checkpoint: " + why); }
}  // namespace

std::string format_leader_epoch_checkpoint(const std::vector<EpochEntry>& entries) {
  std::string out = "0\n" + std::to_string(entries.size()) + "\n";
  for (const auto& e : entries) out += std::to_string(e.epoch.value()) + " " + std::to_string(e.start_offset.value()) + "\n";
  return out;
}

Result<std::vector<EpochEntry>> parse_leader_epoch_checkpoint(std::string_view text) {
  std::vector<std::string_view> lines;
  for (size_t start = 0; start < text.size();) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) return corrupt("last line has no newline");
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  if (lines.size() < 2) return corrupt("missing version or count line");
  int32_t version = -1;
  int64_t count = -1;
  if (!parse_int(lines[0], version) || version != 0) return corrupt("unsupported version");
  if (!parse_int(lines[1], count) || count < 0 || size_t(count) != lines.size() - 2) return corrupt("bad count");
  std::vector<EpochEntry> out;
  for (size_t i = 2; i < lines.size(); ++i) {
    size_t sp = lines[i].find(' ');
    int32_t epoch = -1;
    int64_t offset = -1;
    if (sp == std::string_view::npos || !parse_int(lines[i].substr(0, sp), epoch) ||
        !parse_int(lines[i].substr(sp + 1), offset) || epoch < 0 || offset < 0) {
      return corrupt("malformed entry '" + std::string(lines[i]) + "'");
    }
    if (!out.empty() && (epoch <= out.back().epoch.value() || offset < out.back().start_offset.value())) {
      return corrupt("entries not increasing");
    }
    out.push_back(EpochEntry{LeaderEpoch(epoch), Offset(offset)});
  }
  return out;
}

LeaderEpochCache LeaderEpochCache::load(FileSystem& files, const std::filesystem::path& dir) {
  LeaderEpochCache cache(files, dir / kLeaderEpochCheckpointFile);
  auto text = file_util::read_file(files, cache.file_, kMaxFileBytes);
  if (!text.ok()) {
    if (text.error().kind() != ErrorKind::kNotFound) {
      LOG_WARN("storage", "ignoring {}: {}", cache.file_.string(), text.error().to_string());
    }
    return cache;
  }
  auto parsed = parse_leader_epoch_checkpoint(*text);
  if (!parsed.ok()) {
    LOG_WARN("storage", "ignoring {}: {}", cache.file_.string(), parsed.error().to_string());
    return cache;
  }
  cache.entries_ = std::move(parsed).value();
  return cache;
}

Status LeaderEpochCache::save() {
  return file_util::write_file_atomic(*files_, file_, format_leader_epoch_checkpoint(entries_));
}

Status LeaderEpochCache::assign(LeaderEpoch epoch, Offset offset) {
  if (epoch.value() < 0) return ok_status();
  if (!entries_.empty() && epoch <= entries_.back().epoch) return ok_status();
  std::vector<EpochEntry> before = entries_;
  // A new epoch never starts below the previous one's start.
  while (!entries_.empty() && entries_.back().start_offset > offset) entries_.pop_back();
  entries_.push_back(EpochEntry{epoch, offset});
  Status saved = save();
  // Not saved (say, the disk is full): the append that needed it fails, so
  // keep memory equal to the file and let the retried append assign again.
  if (!saved.ok()) entries_ = std::move(before);
  return saved;
}

Status LeaderEpochCache::truncate_from_end(Offset end) {
  size_t before = entries_.size();
  while (!entries_.empty() && entries_.back().start_offset >= end) entries_.pop_back();
  return entries_.size() == before ? ok_status() : save();
}

Status LeaderEpochCache::truncate_from_start(Offset start) {
  size_t keep_from = 0;
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].start_offset <= start) keep_from = i;
  }
  if (entries_.empty() || (keep_from == 0 && entries_[0].start_offset >= start)) return ok_status();
  entries_.erase(entries_.begin(), entries_.begin() + ptrdiff_t(keep_from));
  entries_[0].start_offset = start;
  return save();
}

Status LeaderEpochCache::clear() {
  if (entries_.empty()) return ok_status();
  entries_.clear();
  return save();
}

std::optional<EpochEntry> LeaderEpochCache::end_offset_for(LeaderEpoch epoch, Offset log_end) const {
  for (size_t i = entries_.size(); i-- > 0;) {
    if (entries_[i].epoch <= epoch) {
      Offset end = i + 1 < entries_.size() ? entries_[i + 1].start_offset : log_end;
      return EpochEntry{entries_[i].epoch, end};
    }
  }
  return std::nullopt;
}

}  // namespace samsa

#include "storage/checkpoint_file.h"

#include <charconv>
#include <vector>

#include "storage/file_util.h"

namespace samsa {

namespace {

constexpr size_t kMaxCheckpointBytes = 64 << 20;

template <typename T>
bool parse_int(std::string_view s, T& out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t at = s.find(sep, start);
    parts.push_back(s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

Error corrupt(const std::string& why) { return Error(ErrorKind::kCorrupt, "offset checkpoint: " + why); }

}  // namespace

std::string format_offset_checkpoint(const OffsetCheckpoint& entries) {
  std::string out = "0\n" + std::to_string(entries.size()) + "\n";
  for (const auto& [tp, offset] : entries) {
    out += tp.topic + " " + std::to_string(tp.partition.value()) + " " + std::to_string(offset.value()) + "\n";
  }
  return out;
}

Result<OffsetCheckpoint> parse_offset_checkpoint(std::string_view text) {
  std::vector<std::string_view> lines = split(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();  // final newline
  if (lines.size() < 2) return corrupt("missing version or count line");
  int32_t version = -1;
  if (!parse_int(lines[0], version) || version != 0) return corrupt("unsupported version '" + std::string(lines[0]) + "'");
  int64_t count = -1;
  if (!parse_int(lines[1], count) || count < 0) return corrupt("bad count '" + std::string(lines[1]) + "'");
  if (size_t(count) != lines.size() - 2) return corrupt("count does not match the entries");
  OffsetCheckpoint out;
  for (size_t i = 2; i < lines.size(); ++i) {
    std::vector<std::string_view> f = split(lines[i], ' ');
    int32_t partition = -1;
    int64_t offset = -1;
    if (f.size() != 3 || f[0].empty() || !parse_int(f[1], partition) || partition < 0 || !parse_int(f[2], offset) ||
        offset < 0) {
      return corrupt("malformed entry '" + std::string(lines[i]) + "'");
    }
    out[TopicPartition{std::string(f[0]), PartitionId(partition)}] = Offset(offset);
  }
  return out;
}

Status write_offset_checkpoint(FileSystem& files, const std::filesystem::path& file, const OffsetCheckpoint& entries) {
  return file_util::write_file_atomic(files, file, format_offset_checkpoint(entries));
}

Result<OffsetCheckpoint> read_offset_checkpoint(FileSystem& files, const std::filesystem::path& file) {
  auto text = file_util::read_file(files, file, kMaxCheckpointBytes);
  if (!text.ok()) {
    if (text.error().kind() == ErrorKind::kNotFound) return OffsetCheckpoint{};
    return text.error();
  }
  auto parsed = parse_offset_checkpoint(*text);
  if (!parsed.ok()) return Error(ErrorKind::kCorrupt, file.string() + ": " + parsed.error().message());
  return parsed;
}

}  // namespace samsa

#include "storage/partition_metadata.h"

#include <string_view>

#include "storage/file_util.h"

namespace samsa {

namespace {
constexpr size_t kMaxFileBytes = 4096;  // the real file is 42 bytes
constexpr std::string_view kVersionLine = "version: 0";
constexpr std::string_view kTopicIdKey = "topic_id: ";

// The next line of `text` (without '\n'), advancing it; nullopt at the end.
std::optional<std::string_view> next_line(std::string_view& text) {
  if (text.empty()) return std::nullopt;
  size_t nl = text.find('\n');
  std::string_view line = text.substr(0, nl);
  text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
  return line;
}
}  // namespace

Status write_partition_metadata(FileSystem& files, const std::filesystem::path& partition_dir, const Uuid& topic_id) {
  std::string text = std::string(kVersionLine) + "\n" + std::string(kTopicIdKey) + topic_id.to_string() + "\n";
  return file_util::write_file_atomic(files, partition_dir / kPartitionMetadataFile, text);
}

Result<std::optional<Uuid>> read_partition_metadata(FileSystem& files, const std::filesystem::path& partition_dir) {
  std::filesystem::path path = partition_dir / kPartitionMetadataFile;
  auto read = file_util::read_file(files, path, kMaxFileBytes);
  if (!read.ok() && read.error().kind() == ErrorKind::kNotFound) return std::optional<Uuid>();
  ASSIGN_OR_RETURN(std::string content, std::move(read));
  std::string_view text = content;
  auto corrupt = [&path](const char* why) { return Error(ErrorKind::kCorrupt, path.string() + ": " + why); };
  auto version = next_line(text);
  if (!version || *version != kVersionLine) return corrupt("expected 'version: 0'");
  auto id_line = next_line(text);
  if (!id_line || !id_line->starts_with(kTopicIdKey)) return corrupt("expected 'topic_id: <uuid>'");
  std::optional<Uuid> id = Uuid::parse(id_line->substr(kTopicIdKey.size()));
  if (!id || id->is_zero()) return corrupt("invalid topic id");
  while (auto rest = next_line(text)) {
    if (!rest->empty()) return corrupt("unexpected content after the topic id");
  }
  return id;
}

}  // namespace samsa

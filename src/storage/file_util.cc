#include "storage/file_util.h"

#include <vector>

namespace samsa::file_util {

std::filesystem::path parent_dir(const std::filesystem::path& path) {
  return path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
}

Status create_directories_durably(FileSystem& files, const std::filesystem::path& dir) {
  // The missing directories, deepest first.
  std::vector<std::filesystem::path> missing;
  for (std::filesystem::path p = dir; !p.empty() && p != p.root_path(); p = p.parent_path()) {
    ASSIGN_OR_RETURN(bool present, files.exists(p));
    if (present) break;
    missing.push_back(p);
  }
  if (missing.empty()) return ok_status();
  RETURN_IF_ERROR(files.create_directories(dir));
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) RETURN_IF_ERROR(files.sync_dir(parent_dir(*it)));
  return ok_status();
}

Status write_file_atomic(FileSystem& files, const std::filesystem::path& path, std::string_view content) {
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  {
    ASSIGN_OR_RETURN(FilePtr file, files.open(tmp, OpenMode::kTruncate));
    RETURN_IF_ERROR(file->write_at(as_bytes(content), 0));
    RETURN_IF_ERROR(file->sync());
  }
  RETURN_IF_ERROR(files.rename(tmp, path));
  return files.sync_dir(parent_dir(path));
}

Result<std::string> read_file(FileSystem& files, const std::filesystem::path& path, size_t max_bytes) {
  ASSIGN_OR_RETURN(FilePtr file, files.open(path, OpenMode::kRead));
  ASSIGN_OR_RETURN(int64_t size, file->size());
  if (size < 0 || uint64_t(size) > max_bytes) {
    return Error(ErrorKind::kCorrupt, path.string() + ": file larger than " + std::to_string(max_bytes));
  }
  std::string out(size_t(size), '\0');
  ASSIGN_OR_RETURN(size_t n, file->read_at(reinterpret_cast<uint8_t*>(out.data()), out.size(), 0));
  out.resize(n);
  return out;
}

}  // namespace samsa::file_util

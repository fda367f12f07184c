#include "base/file_region.h"

namespace samsa {

Result<Bytes> read_region(const FileRegion& region) {
  Bytes out(size_t(region.size));
  if (out.empty()) return out;
  ASSIGN_OR_RETURN(size_t n, region.file->read_at(out.data(), out.size(), region.position));
  if (n != out.size()) return Error(ErrorKind::kCorrupt, "file shorter than the region read: " + region.file->path());
  return out;
}

}  // namespace samsa

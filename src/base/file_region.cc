#include "base/file_region.h"

#include <unistd.h>

namespace samsa {

FileHandle::~FileHandle() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace samsa

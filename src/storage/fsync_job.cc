#include "storage/fsync_job.h"

namespace samsa {

Status FsyncJob::run() const {
  for (const FilePtr& file : to_sync_) RETURN_IF_ERROR(file->sync());
  return files_.sync_dir(dir_);
}

}  // namespace samsa

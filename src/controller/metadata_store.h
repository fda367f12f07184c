#pragma once
// MetadataStore: the cluster metadata log `__cluster_metadata-0` and the
// image replayed from it. On a single node (process.roles=broker,controller
// with one voter) the controller commits records by appending them here and
// fsyncing before they are applied; a quorum will commit the same records
// through raft/ instead, and this class keeps the image side.
//
// Loop-thread only.

#include <filesystem>
#include <memory>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "controller/metadata_image.h"
#include "io/file_system.h"
#include "storage/log.h"

namespace samsa {

class MetadataStore {
 public:
  // Opens (or creates) the log under `metadata_dir` and replays it. A torn
  // tail is truncated by the log's recovery; a record that fails to decode
  // is corruption and fails the open.
  // `files` must outlive the store.
  static Result<std::unique_ptr<MetadataStore>> open(FileSystem& files, const std::filesystem::path& metadata_dir,
                                                     Clock& clock);

  const MetadataImage& image() const { return image_; }
  // The metadata log's end offset (DescribeQuorum's high watermark on a
  // single node, where everything appended is committed).
  Offset end_offset() const { return log_->log_end_offset(); }

  // Appends the records as one batch, fsyncs, then applies them to the
  // image. On failure nothing is applied.
  Status commit(const std::vector<MetadataRecord>& records);

  Status close();

 private:
  MetadataStore(std::unique_ptr<Log> log, Clock& clock) : log_(std::move(log)), clock_(clock) {}
  Status replay();

  std::unique_ptr<Log> log_;
  Clock& clock_;
  MetadataImage image_;
};

}  // namespace samsa

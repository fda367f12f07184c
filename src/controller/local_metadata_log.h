#pragma once
// LocalMetadataLog: the metadata log of a node that is its own single-voter
// controller (process.roles=broker,controller, one voter): the records are
// committed by appending them as one batch to `__cluster_metadata-0` (a
// storage Log) and fsyncing it, inline on the loop thread (one fsync per
// controller decision: rare, small), then published. The log is replayed
// into the image at open. The on-disk format is docs/formats/metadata-log.md
// (unchanged since the first data dirs: they open as they are).
//
// Always active; a failed append or fsync fails the proposal and publishes
// nothing.
//
// Loop-thread only.

#include <filesystem>
#include <memory>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "controller/metadata_log.h"
#include "io/file_system.h"
#include "storage/log.h"

namespace samsa {

class LocalMetadataLog final : public MetadataLog {
 public:
  // Opens (or creates) the log under `metadata_dir` and replays it into the
  // image (no listener sees the replay: they read image() after open). A
  // torn tail is truncated by the log's recovery; a record that fails to
  // decode is corruption and fails the open. `files` must outlive the log.
  static Result<std::unique_ptr<LocalMetadataLog>> open(FileSystem& files, const std::filesystem::path& metadata_dir,
                                                        Clock& clock);

  bool active() const override { return true; }
  // The log's end offset (DescribeQuorum's high watermark on a single node,
  // where everything appended is committed).
  Offset end_offset() const { return log_->log_end_offset(); }
  // Appends, fsyncs and publishes before it returns; `done` is called
  // before it returns too.
  void propose(uint64_t tag, std::vector<MetadataRecord> records, ProposeDone done) override;
  Status shutdown() override;

 private:
  LocalMetadataLog(std::unique_ptr<Log> log, Clock& clock) : log_(std::move(log)), clock_(clock) {}
  Status replay();
  Result<Offset> append(const std::vector<MetadataRecord>& records);

  std::unique_ptr<Log> log_;
  Clock& clock_;
};

}  // namespace samsa

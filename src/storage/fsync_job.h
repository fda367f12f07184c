#pragma once
// FsyncJob: the fsyncs of a rolled segment, for the BlockingExecutor
// (io/runtime.h, io/thread_blocking_executor.h) to run off the loop thread.
//
// The job holds its own references to the segment's Files: they stay open
// (and fsyncable) if retention or a truncation deletes the segment before
// the job runs. It touches nothing else the loop thread owns; the
// FileSystem it syncs the directory through must be usable from the
// executor's thread (PosixFileSystem is; the simulator's executor runs on
// the loop thread).
//
// Until the outcome is delivered nothing depends on the work: the recovery
// point has not moved, and Log::flush() and close() fsync what they need
// themselves.

#include <filesystem>
#include <memory>
#include <utility>
#include <vector>

#include "base/file.h"
#include "base/result.h"
#include "io/file_system.h"

namespace samsa {

class FsyncJob {
 public:
  FsyncJob(FileSystem& files, std::vector<FilePtr> to_sync, std::filesystem::path dir)
      : files_(files), to_sync_(std::move(to_sync)), dir_(std::move(dir)) {}

  // Data first, then the directory entries: the order Log::roll() promised.
  Status run() const;

 private:
  FileSystem& files_;
  std::vector<FilePtr> to_sync_;
  std::filesystem::path dir_;
};

}  // namespace samsa

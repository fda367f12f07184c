#pragma once
// SyncWorker: where the storage layer's fsyncs run.
//
// The thread that owns the logs also serves requests. An fsync takes the
// disk's time: a rolled segment's flush waits for whatever of it is still
// dirty (up to segment.bytes), and even a small checkpoint file's fsync
// waits on the filesystem journal while that writeback runs (121 ms
// measured on this VM while a 1 GiB segment was written back; 23 s for the
// segment itself). An event loop blocked in one stalls every client. Kafka
// runs the same flushes and checkpoint writes on its scheduler thread.
//
// The owner hands over work that touches only what it owns (an FsyncJob
// holds duplicates of the descriptors; a checkpoint write its own copy of
// the entries) and learns the outcome on its own thread. Until then nothing
// depends on the work: the recovery point has not moved, and Log::flush()
// and close() fsync what they need themselves.

#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "base/result.h"

namespace samsa {

// fsyncs of files, then of a directory, on descriptors it owns (duplicated
// from the caller's at creation, closed when the job is destroyed).
class FsyncJob {
 public:
  struct File {
    int fd;
    std::filesystem::path path;
  };
  // Duplicates every descriptor in `files`; `dir` is opened when run.
  static Result<std::shared_ptr<FsyncJob>> of(const std::vector<File>& files, std::filesystem::path dir);
  ~FsyncJob();
  FsyncJob(const FsyncJob&) = delete;
  FsyncJob& operator=(const FsyncJob&) = delete;

  // Data first, then the directory entries: the order Log::roll() promised.
  Status run() const;

 private:
  FsyncJob(std::vector<File> owned, std::filesystem::path dir) : files_(std::move(owned)), dir_(std::move(dir)) {}
  std::vector<File> files_;
  std::filesystem::path dir_;
};

class SyncWorker {
 public:
  using Work = std::function<Status()>;  // runs on any thread; owns what it touches
  using Done = std::function<void(Status)>;  // runs on the owner's thread
  virtual ~SyncWorker() = default;
  virtual void submit(Work work, Done done) = 0;
};

// Runs the work and its callback at once, on the caller's thread: the
// default (tools, tests, the metadata log, and shutdown, which must finish
// its writes before it writes the clean-shutdown marker).
SyncWorker& inline_sync_worker();

// One worker thread runs the work in submission order (two writes of one
// checkpoint file land in order); each outcome goes back through `post`
// (the owning event loop's post(), which is thread-safe). The destructor
// runs the work already submitted, then joins; outcomes posted after the
// owner stopped its loop are simply never run.
class ThreadSyncWorker final : public SyncWorker {
 public:
  using Post = std::function<void(std::function<void()>)>;
  explicit ThreadSyncWorker(Post post);
  ~ThreadSyncWorker() override;
  void submit(Work work, Done done) override;

 private:
  void run();

  Post post_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::pair<Work, Done>> queue_;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace samsa

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
// opens the files itself; a checkpoint write has its own copy of the
// entries) and learns the outcome on its own thread. Until then nothing
// depends on the work: the recovery point has not moved, and Log::flush()
// and close() fsync what they need themselves. Every outcome is delivered,
// failures included: ThreadSyncWorker::stop_and_deliver() hands the last
// ones over before the owner closes its logs.

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

// fsyncs of files, then of a directory, on descriptors of its own: opened
// at creation (so they stay valid if the files are deleted meanwhile, and
// a write-back error is reported to the owner's descriptors too, not only
// to a shared file description), closed when the job is destroyed.
class FsyncJob {
 public:
  struct File {
    int fd;
    std::filesystem::path path;
  };
  // Opens every file in `files` (read-only); `dir` is opened when run.
  static Result<std::shared_ptr<FsyncJob>> of(const std::vector<std::filesystem::path>& files,
                                              std::filesystem::path dir);
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
// checkpoint file land in order). Outcomes wait in a queue of their own;
// the worker asks the owner's loop to deliver them through `post` (the
// event loop's post(), which is thread-safe), and stop_and_deliver() hands
// over whatever the loop did not, so a failure is never dropped.
class ThreadSyncWorker final : public SyncWorker {
 public:
  using Post = std::function<void(std::function<void()>)>;
  explicit ThreadSyncWorker(Post post);
  ~ThreadSyncWorker() override;  // stop_and_deliver()
  void submit(Work work, Done done) override;
  // Runs the work already submitted, joins the thread, then runs every
  // outcome not yet delivered on the calling (owner's) thread. Idempotent.
  void stop_and_deliver();

 private:
  // Shared with the delivery tasks posted to the loop, which may outlive
  // this object unrun; each outcome is taken out once, under the lock.
  struct Outcomes {
    std::mutex mu;
    std::deque<std::pair<Done, Status>> ready;
    void deliver();
  };
  void run();

  Post post_;
  std::shared_ptr<Outcomes> outcomes_ = std::make_shared<Outcomes>();
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::pair<Work, Done>> queue_;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace samsa

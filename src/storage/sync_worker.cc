#include "storage/sync_worker.h"

#include <unistd.h>

#include <cerrno>

#include "storage/file_util.h"

namespace samsa {

Result<std::shared_ptr<FsyncJob>> FsyncJob::of(const std::vector<File>& files, std::filesystem::path dir) {
  std::vector<File> owned;
  owned.reserve(files.size());
  for (const File& f : files) {
    int copy = ::dup(f.fd);
    if (copy < 0) {
      Error error = errno_error("dup " + f.path.string(), errno);
      for (const File& o : owned) ::close(o.fd);
      return error;
    }
    owned.push_back({copy, f.path});
  }
  return std::shared_ptr<FsyncJob>(new FsyncJob(std::move(owned), std::move(dir)));
}

FsyncJob::~FsyncJob() {
  for (const File& f : files_) ::close(f.fd);
}

Status FsyncJob::run() const {
  for (const File& f : files_) RETURN_IF_ERROR(file_util::fsync_fd(f.fd, f.path));
  return file_util::fsync_dir(dir_);
}

namespace {
class InlineSyncWorker final : public SyncWorker {
 public:
  void submit(Work work, Done done) override { done(work()); }
};
}  // namespace

SyncWorker& inline_sync_worker() {
  static InlineSyncWorker worker;
  return worker;
}

ThreadSyncWorker::ThreadSyncWorker(Post post) : post_(std::move(post)), worker_([this] { run(); }) {}

ThreadSyncWorker::~ThreadSyncWorker() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_one();
  worker_.join();
}

void ThreadSyncWorker::submit(Work work, Done done) {
  {
    std::lock_guard lock(mu_);
    queue_.emplace_back(std::move(work), std::move(done));
  }
  wake_.notify_one();
}

void ThreadSyncWorker::run() {
  for (;;) {
    std::unique_lock lock(mu_);
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and all the work has run
    auto [work, done] = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    Status outcome = work();
    post_([done = std::move(done), outcome = std::move(outcome)] { done(outcome); });
  }
}

}  // namespace samsa

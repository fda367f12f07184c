#include "storage/sync_worker.h"

#include <fcntl.h>
#include <unistd.h>

#include <exception>

#include "storage/file_util.h"

namespace samsa {

Result<std::shared_ptr<FsyncJob>> FsyncJob::of(const std::vector<std::filesystem::path>& files,
                                               std::filesystem::path dir) {
  std::vector<File> owned;
  owned.reserve(files.size());
  for (const std::filesystem::path& path : files) {
    Result<int> fd = file_util::open_fd(path, O_RDONLY);
    if (!fd.ok()) {
      for (const File& o : owned) ::close(o.fd);
      return fd.error();
    }
    owned.push_back({*fd, path});
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

ThreadSyncWorker::~ThreadSyncWorker() { stop_and_deliver(); }

void ThreadSyncWorker::stop_and_deliver() {
  if (worker_.joinable()) {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    wake_.notify_one();
    worker_.join();
  }
  outcomes_->deliver();
}

void ThreadSyncWorker::Outcomes::deliver() {
  for (;;) {
    std::unique_lock lock(mu);
    if (ready.empty()) return;
    auto [done, outcome] = std::move(ready.front());
    ready.pop_front();
    lock.unlock();
    done(outcome);
  }
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
    Status outcome;
    try {
      outcome = work();
    } catch (const std::exception& e) {  // e.g. bad_alloc: an outcome, not std::terminate
      outcome = Error(ErrorKind::kIo, std::string("sync worker: ") + e.what());
    }
    {
      std::lock_guard ready(outcomes_->mu);
      outcomes_->ready.emplace_back(std::move(done), std::move(outcome));
    }
    post_([outcomes = outcomes_] { outcomes->deliver(); });
  }
}

}  // namespace samsa

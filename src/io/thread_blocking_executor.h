#pragma once
// The two BlockingExecutors (io/runtime.h) of the real runtime.
//
// Why a thread: the thread that owns the logs also serves requests, and an
// fsync takes the disk's time. A rolled segment's flush waits for whatever
// of it is still dirty (up to segment.bytes), and even a small checkpoint
// file's fsync waits on the filesystem journal while that writeback runs
// (121 ms measured on this VM while a 1 GiB segment was written back; 23 s
// for the segment itself). An event loop blocked in one stalls every
// client. Kafka runs the same flushes and checkpoint writes on its
// scheduler thread.
//
// The owner hands over work that touches only what it owns (an FsyncJob
// holds its own File references; a checkpoint write has its own copy of the
// entries) and learns the outcome on its own thread. Every outcome is
// delivered, failures included: drain() hands the last ones over before the
// owner closes its logs.

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "io/runtime.h"

namespace samsa {

// Runs the work and its callback at once, on the caller's thread: tools,
// tests, the metadata log, and shutdown (which must finish its writes before
// it writes the clean-shutdown marker). Stateless.
class InlineBlockingExecutor final : public BlockingExecutor {
 public:
  void submit(Work work, Done done) override;
  void drain() override {}
};

// A stateless InlineBlockingExecutor for defaults (shared: it holds nothing).
BlockingExecutor& inline_blocking_executor();

// One worker thread runs the work in submission order (two writes of one
// checkpoint file land in order). Outcomes wait in a queue of their own;
// the worker asks the owner's loop to deliver them through `post` (the
// runtime's post(), which is thread-safe), and drain() hands over whatever
// the loop did not, so a failure is never dropped. submit() and drain() are
// for the owner's thread only.
class ThreadBlockingExecutor final : public BlockingExecutor {
 public:
  using Post = std::function<void(std::function<void()>)>;
  explicit ThreadBlockingExecutor(Post post);
  ~ThreadBlockingExecutor() override;  // drain()
  ThreadBlockingExecutor(const ThreadBlockingExecutor&) = delete;
  ThreadBlockingExecutor& operator=(const ThreadBlockingExecutor&) = delete;

  // After drain(), the work and its outcome run inline.
  void submit(Work work, Done done) override;
  // Runs the work already submitted, joins the thread, then runs every
  // outcome not yet delivered on the calling (owner's) thread. Idempotent.
  void drain() override;

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

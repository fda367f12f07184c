#pragma once
// InlineBlockingExecutor: the BlockingExecutor (io/runtime.h) that runs the
// work and its callback at once, on the caller's thread: tools, tests, the
// metadata log, and shutdown (which must finish its writes before it writes
// the clean-shutdown marker). Stateless. Apart from
// io/thread_blocking_executor.h so that code defaulting to it (storage's
// Log) does not include the threaded one.

#include "io/runtime.h"

namespace samsa {

class InlineBlockingExecutor final : public BlockingExecutor {
 public:
  // A throwing work is an outcome (kIo), as on the threaded executor.
  void submit(Work work, Done done) override;
  void drain() override {}
};

// A shared InlineBlockingExecutor for defaults: it holds no state, so
// sharing it couples nothing (not a mutable global).
BlockingExecutor& inline_blocking_executor();

// Runs `work`, turning an exception it throws into a kIo outcome (both
// executors run work through it).
Status run_blocking_work(const BlockingExecutor::Work& work);

}  // namespace samsa

#include "io/inline_blocking_executor.h"

#include <exception>
#include <string>

namespace samsa {

Status run_blocking_work(const BlockingExecutor::Work& work) {
  try {
    return work();
  } catch (const std::exception& e) {  // e.g. bad_alloc: an outcome, not std::terminate
    return Error(ErrorKind::kIo, std::string("blocking work: ") + e.what());
  }
}

void InlineBlockingExecutor::submit(Work work, Done done) { done(run_blocking_work(work)); }

BlockingExecutor& inline_blocking_executor() {
  static InlineBlockingExecutor executor;
  return executor;
}

}  // namespace samsa

#pragma once
// RuntimeWithFiles (tests only): a Runtime that is `inner` in everything but
// its file system, so a test can hand the real broker a FaultyFileSystem
// while it runs on the real runtime's loop, clock and network.

#include "io/runtime.h"

namespace samsa::test {

class RuntimeWithFiles final : public Runtime {
 public:
  RuntimeWithFiles(Runtime& inner, FileSystem& files) : inner_(inner), files_(files) {}
  Clock& clock() override { return inner_.clock(); }
  int64_t now_ns() const override { return inner_.now_ns(); }
  TimerId add_timer(int64_t delay_ms, Task fn) override { return inner_.add_timer(delay_ms, std::move(fn)); }
  bool cancel_timer(TimerId id) override { return inner_.cancel_timer(id); }
  void post(Task task) override { inner_.post(std::move(task)); }
  bool in_loop_thread() const override { return inner_.in_loop_thread(); }
  Network& network() override { return inner_.network(); }
  FileSystem& files() override { return files_; }
  BlockingExecutor& blocking() override { return inner_.blocking(); }
  uint64_t seed() const override { return inner_.seed(); }

 private:
  Runtime& inner_;
  FileSystem& files_;
};

}  // namespace samsa::test

#pragma once
// SignalWatcher: turns POSIX signals into loop callbacks (signalfd).
//
// create() blocks the signals in the calling thread, so it must run before
// the process starts other threads (they inherit the mask); otherwise a
// thread that does not block them may receive the signal and die of it.
// The callback runs on the loop thread with the signal number.
// Destruction stops watching and restores the previous signal mask, so a
// second Ctrl-C during a slow shutdown kills the process as usual.

#include <signal.h>

#include <functional>
#include <memory>
#include <vector>

#include "base/result.h"
#include "io/event_loop.h"
#include "io/unique_fd.h"

namespace samsa {

class SignalWatcher final : public IoHandler {
 public:
  using SignalFn = std::function<void(int signo)>;
  static Result<std::unique_ptr<SignalWatcher>> create(EventLoop& loop, const std::vector<int>& signals,
                                                       SignalFn on_signal);
  ~SignalWatcher() override;

  void on_io(uint32_t events) override;

 private:
  SignalWatcher(EventLoop& loop, UniqueFd fd, sigset_t old_mask, SignalFn on_signal);
  EventLoop& loop_;
  UniqueFd fd_;
  sigset_t old_mask_;
  SignalFn on_signal_;
  IoToken token_ = 0;
};

}  // namespace samsa

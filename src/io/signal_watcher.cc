#include "io/signal_watcher.h"

#include <pthread.h>
#include <sys/signalfd.h>

#include <cerrno>

namespace samsa {

Result<std::unique_ptr<SignalWatcher>> SignalWatcher::create(EventLoop& loop, const std::vector<int>& signals,
                                                             SignalFn on_signal) {
  sigset_t mask, old_mask;
  sigemptyset(&mask);
  for (int s : signals) sigaddset(&mask, s);
  int rc = ::pthread_sigmask(SIG_BLOCK, &mask, &old_mask);
  if (rc != 0) return errno_error("pthread_sigmask", rc);
  UniqueFd fd(::signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC));
  if (!fd.valid()) {
    int err = errno;
    ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    return errno_error("signalfd", err);
  }
  std::unique_ptr<SignalWatcher> w(new SignalWatcher(loop, std::move(fd), old_mask, std::move(on_signal)));
  auto token = loop.add_fd(w->fd_.get(), EPOLLIN, w.get());
  if (!token.ok()) return token.error();  // the destructor restores the mask
  w->token_ = *token;
  return w;
}

SignalWatcher::SignalWatcher(EventLoop& loop, UniqueFd fd, sigset_t old_mask, SignalFn on_signal)
    : loop_(loop), fd_(std::move(fd)), old_mask_(old_mask), on_signal_(std::move(on_signal)) {}

SignalWatcher::~SignalWatcher() {
  if (token_ != 0) loop_.remove_fd(fd_.get(), token_);
  fd_.reset();
  ::pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

void SignalWatcher::on_io(uint32_t /*events*/) {
  signalfd_siginfo info;
  while (::read(fd_.get(), &info, sizeof info) == ssize_t(sizeof info)) {
    on_signal_(int(info.ssi_signo));
  }
}

}  // namespace samsa

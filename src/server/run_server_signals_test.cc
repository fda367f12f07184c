// run_server's two-step stop: the first SIGTERM asks the Service to
// prepare (Service::begin_shutdown: a cluster's controlled shutdown) and
// the loop stops when it is ready; a second signal stops it at once. Either
// way Service::shutdown() runs and the exit code is 0.

#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "broker/service.h"
#include "server/run_server.h"

namespace samsa {
namespace {

struct Seen {
  std::atomic<int> begun{0};
  int shutdowns = 0;
};

// begin_shutdown never calls `ready` when `stuck` (a controller that never
// answers), else at once. A thread of its own sends the signals: one, or a
// second once begin_shutdown has run.
class SlowStopService : public Service, public FrameSink {
 public:
  SlowStopService(Seen* seen, bool stuck) : seen_(seen), stuck_(stuck) {}
  ~SlowStopService() override {
    if (signaller_.joinable()) signaller_.join();
  }
  FrameSink& sink() override { return *this; }
  Status start(Runtime&, const BrokerConfig&) override {
    // Started after run_server blocked the signals: inherits the mask.
    signaller_ = std::thread([this] { signal_twice_if_stuck(); });
    return ok_status();
  }
  void begin_shutdown(std::function<void()> ready) override {
    ++seen_->begun;
    if (!stuck_) ready();
  }
  void shutdown() override {
    ++seen_->shutdowns;
    if (signaller_.joinable()) signaller_.join();
  }
  void on_frame(InboundFrame, ReplyFn reply) override { reply(Reply{ReplyKind::kClose, {}}); }

 private:
  void signal_twice_if_stuck() {
    ::kill(::getpid(), SIGTERM);
    if (!stuck_) return;
    // Bounded: the loop handles the first signal within milliseconds.
    for (int i = 0; i < 2000 && seen_->begun.load() == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ::kill(::getpid(), SIGTERM);
  }

  Seen* seen_;
  bool stuck_;
  std::thread signaller_;
};

int run_with(Seen& seen, bool stuck, std::string& log) {
  set_service_factory([&seen, stuck] { return std::make_unique<SlowStopService>(&seen, stuck); });
  std::vector<std::string> args{"server", "--override", "listeners=PLAINTEXT://127.0.0.1:0"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  testing::internal::CaptureStderr();
  int rc = run_server(int(argv.size()), argv.data());
  log = testing::internal::GetCapturedStderr();
  set_service_factory(nullptr);
  return rc;
}

TEST(RunServerSignals, TheFirstSignalWaitsForTheServiceToBeReady) {
  Seen seen;
  std::string log;
  EXPECT_EQ(run_with(seen, /*stuck=*/false, log), 0) << log;
  EXPECT_EQ(seen.begun.load(), 1);
  EXPECT_EQ(seen.shutdowns, 1);
  EXPECT_EQ(log.find("shutting down now"), std::string::npos) << log;
}

TEST(RunServerSignals, ASecondSignalStopsAWaitThatNeverEnds) {
  Seen seen;
  std::string log;
  EXPECT_EQ(run_with(seen, /*stuck=*/true, log), 0) << log;
  EXPECT_EQ(seen.begun.load(), 1) << "begin_shutdown once, not again for the second signal";
  EXPECT_EQ(seen.shutdowns, 1);
  EXPECT_NE(log.find("received SIGTERM, shutting down now"), std::string::npos) << log;
}

}  // namespace
}  // namespace samsa

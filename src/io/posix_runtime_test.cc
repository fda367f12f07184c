#include "io/posix_runtime.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace samsa {
namespace {

std::unique_ptr<PosixRuntime> make_runtime(uint64_t seed = 42) {
  auto runtime = PosixRuntime::create(seed);
  EXPECT_TRUE(runtime.ok());
  return std::move(runtime).value();
}

TEST(PosixRuntime, TimersAndPostsRunOnTheLoopThroughTheRuntimeInterface) {
  auto posix = make_runtime();
  Runtime& runtime = *posix;
  std::vector<int> order;
  int64_t start_ns = runtime.now_ns();
  TimerId cancelled = runtime.add_timer(0, [&] { order.push_back(99); });
  EXPECT_TRUE(runtime.cancel_timer(cancelled));
  EXPECT_FALSE(runtime.cancel_timer(cancelled));
  runtime.add_timer(0, [&] { order.push_back(2); });
  // Both due before run(): a round runs its timers, then its posts. The
  // 5 ms timer is added by the post, so no timing decides the order.
  std::thread poster([&] {
    runtime.post([&] {
      order.push_back(1);
      runtime.add_timer(5, [&] {
        order.push_back(3);
        EXPECT_GE(runtime.now_ns() - start_ns, 5'000'000);
        posix->stop();
      });
    });
  });
  poster.join();
  posix->run();
  EXPECT_EQ(order, (std::vector<int>{2, 1, 3}));
  EXPECT_EQ(runtime.seed(), 42u);
  EXPECT_GT(runtime.clock().wall_ms(), 1'600'000'000'000);  // a wall clock, not a monotonic one
}

TEST(PosixRuntime, BlockingWorkRunsOffTheLoopAndItsOutcomeOnIt) {
  auto posix = make_runtime();
  Runtime& runtime = *posix;
  std::thread::id loop_thread, work_thread, done_thread;
  runtime.post([&] {
    loop_thread = std::this_thread::get_id();
    runtime.blocking().submit(
        [&] {
          work_thread = std::this_thread::get_id();
          return Status(Error(ErrorKind::kIo, "disk says no"));
        },
        [&](Status outcome) {
          done_thread = std::this_thread::get_id();
          EXPECT_FALSE(outcome.ok());
          posix->stop();
        });
  });
  posix->run();
  EXPECT_NE(work_thread, loop_thread);
  EXPECT_EQ(done_thread, loop_thread);
}

TEST(PosixRuntime, SeedsFromTheOsDiffer) {
  // Two 64-bit draws colliding would mean the seed is not random at all.
  EXPECT_NE(os_random_seed(), os_random_seed());
}

}  // namespace
}  // namespace samsa

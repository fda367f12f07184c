#include "io/thread_blocking_executor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace samsa {
namespace {

const auto kNoLoop = [](std::function<void()>) {};  // a loop that has stopped

TEST(ThreadBlockingExecutor, DrainHandsOverOutcomesTheLoopNeverRan) {
  std::vector<Status> delivered;
  {
    ThreadBlockingExecutor executor(kNoLoop);
    executor.submit([] { return Status(Error(ErrorKind::kIo, "fsync: Input/output error")); },
                    [&delivered](Status st) { delivered.push_back(st); });
    executor.submit([] { return ok_status(); }, [&delivered](Status st) { delivered.push_back(st); });
    executor.drain();
    ASSERT_EQ(delivered.size(), 2u);  // on this thread, before any close()
    EXPECT_FALSE(delivered[0].ok());
    EXPECT_TRUE(delivered[1].ok());
    executor.drain();  // idempotent
  }
  EXPECT_EQ(delivered.size(), 2u);  // the destructor delivers nothing twice
}

TEST(ThreadBlockingExecutor, AThrowingWorkIsAnOutcome) {
  std::vector<Status> delivered;
  ThreadBlockingExecutor executor(kNoLoop);
  executor.submit([]() -> Status { throw std::runtime_error("boom"); },
                  [&delivered](Status st) { delivered.push_back(st); });
  executor.drain();
  ASSERT_EQ(delivered.size(), 1u);
  EXPECT_FALSE(delivered[0].ok());
}

TEST(ThreadBlockingExecutor, AfterDrainWorkRunsInline) {
  ThreadBlockingExecutor executor(kNoLoop);
  executor.drain();
  const auto caller = std::this_thread::get_id();
  bool ran_here = false;
  bool delivered = false;
  executor.submit(
      [&] {
        ran_here = std::this_thread::get_id() == caller;
        return ok_status();
      },
      [&](Status st) { delivered = st.ok(); });
  EXPECT_TRUE(ran_here);
  EXPECT_TRUE(delivered);
}

TEST(ThreadBlockingExecutor, RunsWorkElsewhereAndPostsOutcomesInOrder) {
  std::mutex mu;
  std::vector<std::function<void()>> posted;
  std::vector<int> outcomes;
  const auto caller = std::this_thread::get_id();
  std::atomic<int> work_off_thread{0};
  std::atomic<int> posts_off_thread{0};
  {
    ThreadBlockingExecutor executor([&](std::function<void()> task) {
      if (std::this_thread::get_id() != caller) ++posts_off_thread;
      std::lock_guard lock(mu);
      posted.push_back(std::move(task));
    });
    for (int i = 0; i < 5; ++i) {
      executor.submit(
          [&] {
            if (std::this_thread::get_id() != caller) ++work_off_thread;
            return ok_status();
          },
          [&outcomes, i](Status st) {
            EXPECT_TRUE(st.ok());
            outcomes.push_back(i);
          });
    }
  }  // the destructor runs what was submitted, then joins (and delivers)
  EXPECT_EQ(work_off_thread.load(), 5);
  EXPECT_EQ(posts_off_thread.load(), 5);
  ASSERT_EQ(posted.size(), 5u);
  EXPECT_EQ(outcomes, (std::vector<int>{0, 1, 2, 3, 4}));  // the destructor delivered them, in order
  for (auto& task : posted) task();  // the loop runs them late: nothing is delivered twice
  EXPECT_EQ(outcomes.size(), 5u);
}

TEST(ThreadBlockingExecutor, ALoopThatRunsThePostsDeliversEachOutcomeOnce) {
  std::mutex mu;
  std::condition_variable changed;
  std::vector<std::function<void()>> posted;
  std::vector<int> outcomes;
  ThreadBlockingExecutor executor([&](std::function<void()> task) {
    std::lock_guard lock(mu);
    posted.push_back(std::move(task));
    changed.notify_all();
  });
  for (int i = 0; i < 3; ++i) {
    executor.submit([] { return ok_status(); }, [&outcomes, i](Status) { outcomes.push_back(i); });
  }
  std::vector<std::function<void()>> tasks;
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(changed.wait_for(lock, std::chrono::seconds(10), [&] { return posted.size() == 3; }));
    tasks = posted;
  }
  for (auto& task : tasks) task();
  executor.drain();
  EXPECT_EQ(outcomes, (std::vector<int>{0, 1, 2}));
}

TEST(InlineBlockingExecutor, RunsWorkAndDoneAtOnce) {
  InlineBlockingExecutor executor;
  std::vector<Status> delivered;
  executor.submit([] { return ok_status(); }, [&](Status st) { delivered.push_back(st); });
  executor.submit([]() -> Status { throw std::runtime_error("boom"); }, [&](Status st) { delivered.push_back(st); });
  ASSERT_EQ(delivered.size(), 2u);
  EXPECT_TRUE(delivered[0].ok());
  EXPECT_FALSE(delivered[1].ok());
  executor.drain();
  inline_blocking_executor().submit([] { return ok_status(); }, [&](Status st) { delivered.push_back(st); });
  EXPECT_EQ(delivered.size(), 3u);
}

}  // namespace
}  // namespace samsa

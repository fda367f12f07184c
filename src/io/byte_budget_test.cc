// ByteBudget on a loop driven by this thread: waiters and the freed hook run
// from posted tasks, so each test runs the loop until a condition holds
// (bounded by a step count, never by time).

#include "io/byte_budget.h"
#include "io/posix_runtime.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace samsa {
namespace {

// Each phase runs on its own runtime.
struct Phase {
  std::unique_ptr<PosixRuntime> loop = std::move(PosixRuntime::create(/*seed=*/1)).value();
  void run_posted() {
    loop->post([this] { loop->stop(); });  // behind what is posted so far
    loop->run();
  }
};

TEST(ByteBudget, AcquireSucceedsWhileAnythingIsLeftSoOneLargeRequestFits) {
  Phase p;
  auto b = ByteBudget::create(*p.loop, 100);
  EXPECT_TRUE(b->try_acquire(60));
  EXPECT_TRUE(b->try_acquire(60));  // overshoots by one acquisition
  EXPECT_EQ(b->used(), 120u);
  EXPECT_TRUE(b->exhausted());
  EXPECT_FALSE(b->try_acquire(1));
  EXPECT_EQ(b->used(), 120u);
  b->release(20);
  EXPECT_TRUE(b->exhausted());  // used == capacity
  b->release(60);
  EXPECT_FALSE(b->exhausted());
  EXPECT_TRUE(b->try_acquire(1000));  // larger than the whole budget
  b->acquire_anyway(5);
  EXPECT_EQ(b->used(), 1045u);
}

TEST(ByteBudget, WaitersRunInOrderFromAPostedTaskNeverInsideRelease) {
  Phase p;
  auto b = ByteBudget::create(*p.loop, 10);
  ASSERT_TRUE(b->try_acquire(10));
  std::vector<std::string> woken;
  b->wait([&] { woken.push_back("a"); });
  b->wait([&] { woken.push_back("b"); });
  auto c = b->wait([&] { woken.push_back("c"); });
  b->cancel(c);
  b->release(10);
  EXPECT_TRUE(woken.empty());  // release() may run deep inside a handler
  p.run_posted();
  EXPECT_EQ(woken, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(b->waiters(), 0u);
}

TEST(ByteBudget, WakingStopsWhenTheBudgetIsExhaustedAgain) {
  Phase p;
  auto b = ByteBudget::create(*p.loop, 10);
  ASSERT_TRUE(b->take_overdraft(99));  // held: exhausted means no progress
  ASSERT_TRUE(b->try_acquire(10));
  std::vector<std::string> woken;
  b->wait([&] {
    woken.push_back("a");
    b->acquire_anyway(10);  // takes all that was freed
  });
  b->wait([&] { woken.push_back("b"); });
  b->release(10);
  p.run_posted();
  EXPECT_EQ(woken, (std::vector<std::string>{"a"}));
  EXPECT_EQ(b->waiters(), 1u);  // b is still first in line
}

TEST(ByteBudget, OneOverdraftAtATimeAndItsEndWakesWaiters) {
  Phase p;
  auto b = ByteBudget::create(*p.loop, 10);
  ASSERT_TRUE(b->try_acquire(10));
  EXPECT_TRUE(b->take_overdraft(1));
  EXPECT_TRUE(b->take_overdraft(1));  // already its own
  EXPECT_FALSE(b->take_overdraft(2));
  bool woken = false;
  b->wait([&] { woken = true; });
  b->end_overdraft(2);  // not the holder: no-op
  EXPECT_EQ(b->overdraft_holder(), 1u);
  b->end_overdraft(1);
  EXPECT_EQ(b->overdraft_holder(), 0u);
  p.run_posted();
  EXPECT_TRUE(woken);  // a waiter in the middle of a frame may now take it
  EXPECT_TRUE(b->take_overdraft(2));
}

TEST(ByteBudget, LeaseReleasesItsChargeWhenTheLastCopyIsDropped) {
  Phase p;
  auto b = ByteBudget::create(*p.loop, 1000);
  auto buffer = std::make_shared<Bytes>(300, 7);
  ASSERT_TRUE(b->try_acquire(300));
  std::shared_ptr<Bytes> leased = b->lease(buffer, 300);
  EXPECT_EQ(leased.get(), buffer.get());
  EXPECT_EQ(buffer.use_count(), 2);  // ours and the lease's
  auto copy = leased;
  leased.reset();
  EXPECT_EQ(b->used(), 300u);
  copy.reset();
  EXPECT_EQ(b->used(), 0u);
  EXPECT_EQ(buffer.use_count(), 1);  // reusable at once
}

TEST(ByteBudget, FreedHookRunsAfterAFallFarBelowThePeakNotUnderSteadyLoad) {
  Phase p;
  auto b = ByteBudget::create(*p.loop, ByteBudget::kUnbounded, /*trim_slack=*/1000);
  int freed = 0;
  b->set_on_freed([&] { ++freed; });
  for (int i = 0; i < 100; ++i) {  // steady load: never far below its peak
    b->acquire_anyway(900);
    b->release(900);
  }
  b->acquire_anyway(5000);  // a burst, then quiet
  b->release(4000);
  b->release(1000);
  b->acquire_anyway(900);
  b->release(900);
  p.run_posted();
  EXPECT_EQ(freed, 1);  // once per fall, from a posted task
}

}  // namespace
}  // namespace samsa

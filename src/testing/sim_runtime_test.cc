#include "testing/sim_runtime.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cerrno>

#include "testing/sim_test_support.h"
#include "testing/sim_world.h"

namespace samsa::sim {
namespace {

TEST(SimRuntime, TimersAndPostsRunInTimeThenInsertionOrder) {
  SimWorld world(1);
  HostId h = world.add_host();
  Runtime& rt = world.runtime(h);
  std::vector<std::string> order;
  rt.add_timer(10, [&] { order.push_back("t10a"); });
  rt.post([&] { order.push_back("p1"); });
  rt.add_timer(0, [&] { order.push_back("t0"); });
  rt.add_timer(5, [&] { order.push_back("t5"); });
  rt.add_timer(10, [&] {
    order.push_back("t10b");
    rt.post([&] { order.push_back("p-from-t10b"); });
  });
  TimerId cancelled = rt.add_timer(7, [&] { order.push_back("never"); });
  rt.post([&] { order.push_back("p2"); });
  EXPECT_TRUE(rt.cancel_timer(cancelled));
  EXPECT_FALSE(rt.cancel_timer(cancelled));
  EXPECT_TRUE(order.empty());  // nothing runs inside the call that scheduled it
  world.run_until_idle();
  EXPECT_EQ(order, (std::vector<std::string>{"p1", "t0", "p2", "t5", "t10a", "t10b", "p-from-t10b"}));
  EXPECT_EQ(rt.now_ms(), 10);
  EXPECT_TRUE(rt.in_loop_thread());
}

TEST(SimRuntime, TheClockJumpsToTheNextEvent) {
  SimWorld world(1);
  HostId h = world.add_host();
  Runtime& rt = world.runtime(h);
  int64_t fired_at = -1;
  rt.add_timer(3'600'000, [&] { fired_at = rt.now_ms(); });
  EXPECT_TRUE(world.step());
  EXPECT_EQ(fired_at, 3'600'000);
  EXPECT_EQ(world.events_run(), 1u);
  EXPECT_EQ(rt.clock().monotonic_ms(), 3'600'000);
  EXPECT_EQ(rt.clock().wall_ms(), SimWorld::kWallEpochMs + 3'600'000);
  world.set_wall_offset_ms(h, -5000);  // skew / a jump backwards of the wall clock
  EXPECT_EQ(rt.clock().wall_ms(), SimWorld::kWallEpochMs + 3'600'000 - 5000);
  EXPECT_EQ(rt.clock().monotonic_ms(), 3'600'000);
}

TEST(SimRuntime, SeedsDifferPerHostAndIncarnationAndReplay) {
  SimWorld a(42);
  SimWorld b(42);
  HostId a1 = a.add_host(), a2 = a.add_host();
  HostId b1 = b.add_host();
  EXPECT_EQ(a.runtime(a1).seed(), b.runtime(b1).seed());
  EXPECT_NE(a.runtime(a1).seed(), a.runtime(a2).seed());
  uint64_t before = a.runtime(a1).seed();
  a.crash(a1);
  EXPECT_NE(a.restart(a1).seed(), before);
}

TEST(SimRuntime, BlockingWorkRunsInOrderAfterTheDiskLatency) {
  SimWorld world(3);
  HostId h = world.add_host();
  world.volume(h).set_latency_us(1000, 1000);
  BlockingExecutor& ex = world.runtime(h).blocking();
  std::vector<std::string> order;
  for (int i = 0; i < 3; ++i) {
    ex.submit([&order, i] {
                order.push_back("run" + std::to_string(i));
                return i == 1 ? Status(Error(ErrorKind::kIo, "boom")) : ok_status();
              },
              [&order, i](Status s) { order.push_back("done" + std::to_string(i) + (s.ok() ? "" : "!")); });
  }
  EXPECT_TRUE(order.empty());
  world.run_until_idle();
  EXPECT_EQ(order, (std::vector<std::string>{"run0", "done0", "run1", "done1!", "run2", "done2"}));
  EXPECT_EQ(world.now_ms(), 3);  // one at a time, 1 ms each
}

TEST(SimRuntime, DrainRunsEverythingInlineAndLaterSubmitsToo) {
  SimWorld world(3);
  HostId h = world.add_host();
  BlockingExecutor& ex = world.runtime(h).blocking();
  int runs = 0, dones = 0;
  for (int i = 0; i < 4; ++i) ex.submit([&] { ++runs; return ok_status(); }, [&](Status) { ++dones; });
  ex.drain();
  EXPECT_EQ(runs, 4);
  EXPECT_EQ(dones, 4);
  ex.submit([&] { ++runs; return ok_status(); }, [&](Status) { ++dones; });
  EXPECT_EQ(dones, 5);
  EXPECT_EQ(world.run_until_idle(), 0u);  // nothing left for the queue
}

// A crash forgets the host's timers, posts, blocking work and streams;
// its peers see the reset; a restart is a fresh runtime over the same disk.
TEST(SimRuntime, CrashForgetsEverythingAndRestartStartsFresh) {
  SimWorld world(5);
  HostId server = world.add_host();
  HostId client = world.add_host();
  world.volume(server).create_durable_directories("/data");
  bool timer_ran = false, post_ran = false, work_ran = false;
  std::vector<std::unique_ptr<TestPeer>> accepted;
  {
    Runtime& rt = world.runtime(server);
    auto l = rt.network().listen(ListenOptions{"", 9092}, [&](StreamPtr s) {
      accepted.push_back(std::make_unique<TestPeer>(std::move(s)));
    });
    ASSERT_TRUE(l.ok());
    std::unique_ptr<Listener> listener = std::move(l).value();
    std::unique_ptr<TestPeer> dialed;
    world.runtime(client).network().connect("10.0.0.1", 9092, 5000, [&](Result<StreamPtr> r) {
      ASSERT_TRUE(r.ok());
      dialed = std::make_unique<TestPeer>(std::move(r).value());
    });
    ASSERT_TRUE(world.run_until([&] { return dialed && !accepted.empty(); }, 10'000));
    FilePtr f = *rt.files().open("/data/state", OpenMode::kCreate);
    ASSERT_TRUE(rt.files().sync_dir("/data").ok());
    ASSERT_TRUE(f->write_at(as_bytes("durable"), 0).ok());
    ASSERT_TRUE(f->sync().ok());
    ASSERT_TRUE(f->write_at(as_bytes("+volatile-volatile-volatile"), 7).ok());
    rt.add_timer(100, [&] { timer_ran = true; });
    rt.post([&] { post_ran = true; });
    world.volume(server).set_latency_us(50'000, 50'000);
    rt.blocking().submit([&] { work_ran = true; return ok_status(); }, [](Status) {});

    world.crash(server);
    // The dead runtime takes calls and does nothing with them.
    rt.post([&] { post_ran = true; });
    EXPECT_EQ(rt.add_timer(1, [&] { timer_ran = true; }), 0u);
    ASSERT_TRUE(world.run_until([&] { return dialed->hangups > 0; }, 10'000));
    EXPECT_EQ(dialed->read_error, ECONNRESET);
    // The application's objects are torn down after the crash, harmlessly.
    accepted.clear();
    listener.reset();
    f.reset();
  }
  world.run_for_ms(10'000);
  EXPECT_FALSE(timer_ran);
  EXPECT_FALSE(post_ran);
  EXPECT_FALSE(work_ran);
  EXPECT_FALSE(world.up(server));

  // While down: refused.
  std::optional<Error> refused;
  world.runtime(client).network().connect("10.0.0.1", 9092, 5000, [&](Result<StreamPtr> r) {
    ASSERT_FALSE(r.ok());
    refused = r.error();
  });
  ASSERT_TRUE(world.run_until([&] { return refused.has_value(); }, 10'000));

  SimRuntime& fresh = world.restart(server);
  EXPECT_EQ(fresh.incarnation(), 2u);
  EXPECT_EQ(fresh.pending_timers(), 0u);
  auto content = world.volume(server).read_whole("/data/state");
  ASSERT_TRUE(content.ok());
  EXPECT_EQ(std::string(as_string_view(*content)).substr(0, 7), "durable");
  bool fresh_timer = false;
  fresh.add_timer(1, [&] { fresh_timer = true; });
  world.run_until_idle();
  EXPECT_TRUE(fresh_timer);
}

// A handler that keeps an interest it never serves is called for ever at
// one instant (level-triggered, as epoll would): the world stops it.
TEST(SimRuntimeDeathTest, ALivelockAtOneInstantAsserts) {
  EXPECT_DEATH(
      {
        SimWorld world(1);
        world.set_livelock_limit(1000);
        HostId h = world.add_host();
        std::function<void()> again;
        again = [&] { world.runtime(h).post(again); };
        world.runtime(h).post(again);
        world.run_until_idle();
      },
      "livelock");
}

// One run with traffic, faults, a crash and disk work: its trace.
std::string run_scenario(uint64_t seed) {
  SimWorld world(seed);
  LinkFaults f;
  f.loss = 0.05;
  f.min_latency_us = 100;
  f.max_latency_us = 3000;
  world.net().set_default_faults(f);
  HostId server = world.add_host();
  HostId client = world.add_host();
  world.volume(server).create_durable_directories("/data");
  std::vector<std::unique_ptr<TestPeer>> accepted;
  std::unique_ptr<Listener> listener =
      world.runtime(server).network().listen(ListenOptions{"", 9092}, [&](StreamPtr s) {
        accepted.push_back(std::make_unique<TestPeer>(std::move(s)));
      }).value();
  std::unique_ptr<TestPeer> dialed;
  world.runtime(client).network().connect("10.0.0.1", 9092, 5000, [&](Result<StreamPtr> r) {
    if (r.ok()) dialed = std::make_unique<TestPeer>(std::move(r).value());
  });
  world.run_until([&] { return dialed && !accepted.empty(); }, 10'000);
  if (!dialed || accepted.empty()) return "no connection";
  dialed->send(test_pattern(4'000'000));
  accepted[0]->send(test_pattern(2'000'000));
  Runtime& rt = world.runtime(server);
  FilePtr file = *rt.files().open("/data/log", OpenMode::kCreate);
  (void)rt.files().sync_dir("/data");
  for (int i = 0; i < 20; ++i) {
    rt.add_timer(world.rng().range(1, 50), [&, i] {
      Bytes b = test_pattern(size_t(100 + i), uint8_t(i));
      (void)file->write_at(b, int64_t(i) * 200);
      if (i % 5 == 0) rt.blocking().submit([file] { return file->sync(); }, [](Status) {});
    });
  }
  world.run_for_ms(20);
  world.net().cut_both(server, client);
  world.run_for_ms(500);
  world.net().heal();
  world.run_for_ms(40);
  world.crash(server);
  accepted.clear();
  listener.reset();
  file.reset();
  world.run_for_ms(100);
  world.restart(server);
  auto content = world.volume(server).read_whole("/data/log");
  uint64_t sum = 0;
  if (content.ok()) {
    for (uint8_t b : *content) sum = sum * 31 + b;
  }
  world.note(kWorldHost, content.ok() ? fmt::format("log {} bytes, sum {}", content->size(), sum) : "log gone");
  world.run_until_idle();
  return world.trace_text();
}

TEST(SimDeterminism, SameSeedSameTraceByteForByte) {
  std::string first = run_scenario(20261201);
  std::string second = run_scenario(20261201);
  EXPECT_GT(first.size(), 10'000u) << first;
  EXPECT_NE(first.find("held"), std::string::npos);
  EXPECT_NE(first.find("reset"), std::string::npos);
  EXPECT_EQ(first, second);
  EXPECT_NE(first, run_scenario(20261202));
}

TEST(SimDeterminism, TraceLinesSayTimeHostAndWhat) {
  SimWorld world(1);
  HostId h = world.add_host();
  world.runtime(h).add_timer(2, [] {});
  world.runtime(h).post([] {});
  world.run_until_idle();
  ASSERT_EQ(world.trace().size(), 3u);
  EXPECT_EQ(world.trace()[0], "0.000000 h1 host up 10.0.0.1");
  EXPECT_EQ(world.trace()[1], "0.000000 h1 post");
  EXPECT_EQ(world.trace()[2], "2.000000 h1 timer 2ms");
  SimWorld again(1);
  HostId h2 = again.add_host();
  again.runtime(h2).add_timer(2, [] {});
  again.runtime(h2).post([] {});
  again.run_until_idle();
  EXPECT_EQ(again.trace_hash(), world.trace_hash());
}

}  // namespace
}  // namespace samsa::sim

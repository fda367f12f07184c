// The broker simulation itself: a seed replays byte for byte, and a short
// run of the real Broker under faults keeps every promise LogHistory checks.
// (Longer runs: tests/sim's broker seeds and `samsa-sim --broker --seeds`.)
#include "testing/broker_sim.h"

#include <gtest/gtest.h>

#include "base/log.h"

namespace samsa::sim {
namespace {

BrokerSimResult short_run(uint64_t seed, BrokerSimMix mix = {}) {
  set_log_level(LogLevel::kOff);
  BrokerSimOptions o;
  o.seed = seed;
  o.duration_ms = 4000;
  o.mix = mix;
  BrokerSimResult r = run_broker_sim(o);
  set_log_level(LogLevel::kInfo);
  return r;
}

TEST(BrokerSim, TheSameSeedGivesTheSameTraceByteForByte) {
  BrokerSimResult a = short_run(11);
  BrokerSimResult b = short_run(11);
  EXPECT_EQ(a.trace_hash, b.trace_hash);
  EXPECT_EQ(a.trace_lines, b.trace_lines);
  EXPECT_EQ(a.acknowledged, b.acknowledged);
  BrokerSimResult c = short_run(12);
  EXPECT_NE(a.trace_hash, c.trace_hash);
}

// Every client at once, topics deleted and created again: the names of
// deleted partition dirs and the broker's other draws come from the seed.
TEST(BrokerSim, ARunThatDeletesTopicsReplaysByteForByte) {
  BrokerSimMix all = *BrokerSimMix::named("all");
  BrokerSimResult a = short_run(13, all);
  BrokerSimResult b = short_run(13, all);
  EXPECT_TRUE(a.ok) << a.summary();
  EXPECT_GE(a.topic_incarnations, 2) << a.summary();  // created, deleted, created again
  EXPECT_GT(a.group_commits_acknowledged, 0u) << a.summary();
  EXPECT_GT(a.list_offsets_answers, 0u) << a.summary();
  EXPECT_EQ(a.trace_hash, b.trace_hash);
  EXPECT_EQ(a.trace_lines, b.trace_lines);
  EXPECT_EQ(a.summary(), b.summary());
}

TEST(BrokerSim, AShortRunUnderFaultsKeepsEveryPromise) {
  BrokerSimResult r = short_run(2);
  EXPECT_TRUE(r.ok) << r.summary();
  EXPECT_GT(r.acknowledged, 1000u) << r.summary();
}

}  // namespace
}  // namespace samsa::sim

// The broker simulation itself: a seed replays byte for byte, and a short
// run of the real Broker under faults keeps every promise LogHistory checks.
// (Longer runs: tests/sim's broker seeds and `samsa-sim --broker --seeds`.)
#include "testing/broker_sim.h"

#include <gtest/gtest.h>

#include "base/log.h"

namespace samsa::sim {
namespace {

BrokerSimResult short_run(uint64_t seed) {
  set_log_level(LogLevel::kOff);
  BrokerSimOptions o;
  o.seed = seed;
  o.duration_ms = 4000;
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

TEST(BrokerSim, AShortRunUnderFaultsKeepsEveryPromise) {
  BrokerSimResult r = short_run(2);
  EXPECT_TRUE(r.ok) << r.summary();
  EXPECT_GT(r.acknowledged, 1000u) << r.summary();
}

}  // namespace
}  // namespace samsa::sim

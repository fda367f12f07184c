// Tests of the simulator's own parts: the linearizability checker must reject
// what is not linearizable, the simulated disk must lose exactly what was not
// synced, and a seed must replay exactly.
#include <gtest/gtest.h>

#include "testing/linearizability.h"
#include "testing/scenario.h"
#include "testing/sim_disk.h"
#include "testing/sim_run.h"

namespace samsa::sim {
namespace {

KvHistoryOp put(int64_t v, uint64_t invoke, uint64_t complete) {
  return KvHistoryOp{1, 0, true, v, invoke, complete};
}
KvHistoryOp get(int64_t v, uint64_t invoke, uint64_t complete) {
  return KvHistoryOp{2, 0, false, v, invoke, complete};
}
constexpr uint64_t kNever = KvHistoryOp::kNever;

LinearizableResult check(std::vector<KvHistoryOp> h) { return check_linearizable(h, 1000000).result; }

TEST(Linearizability, SequentialHistoryIsLinearizable) {
  EXPECT_EQ(check({put(1, 1, 2), get(1, 3, 4), put(2, 5, 6), get(2, 7, 8)}), LinearizableResult::kOk);
}

TEST(Linearizability, StaleReadIsAViolation) {
  EXPECT_EQ(check({put(1, 1, 2), put(2, 3, 4), get(1, 5, 6)}), LinearizableResult::kViolation);
}

TEST(Linearizability, ReadOfAValueNeverWrittenIsAViolation) {
  EXPECT_EQ(check({put(1, 1, 2), get(7, 3, 4)}), LinearizableResult::kViolation);
}

TEST(Linearizability, ConcurrentWriteMayBeSeenEitherWayOnce) {
  EXPECT_EQ(check({put(1, 1, 10), get(0, 2, 3), get(1, 4, 5)}), LinearizableResult::kOk);
  // Once a read saw the write, a later read cannot miss it.
  EXPECT_EQ(check({put(1, 1, 10), get(1, 2, 3), get(0, 4, 5)}), LinearizableResult::kViolation);
}

TEST(Linearizability, AmbiguousWriteMayHappenLateOrNever) {
  EXPECT_EQ(check({put(5, 1, kNever), get(0, 10, 11)}), LinearizableResult::kOk);
  EXPECT_EQ(check({put(5, 1, kNever), get(0, 10, 11), get(5, 12, 13)}), LinearizableResult::kOk);
  EXPECT_EQ(check({put(5, 1, kNever), get(5, 10, 11), get(0, 12, 13)}), LinearizableResult::kViolation);
  // It cannot take effect before it was invoked.
  EXPECT_EQ(check({get(5, 1, 2), put(5, 3, kNever)}), LinearizableResult::kViolation);
}

TEST(Linearizability, KeysAreIndependent) {
  KvHistoryOp a = put(1, 1, 2);
  KvHistoryOp b = get(0, 3, 4);
  b.key = 1;  // another key: still 0
  EXPECT_EQ(check({a, b}), LinearizableResult::kOk);
}

TEST(Linearizability, BudgetGivesUnknown) {
  std::vector<KvHistoryOp> h;
  for (int i = 0; i < 40; ++i) h.push_back(put(i + 1, 1, 1000));
  h.push_back(get(999, 1001, 1002));  // impossible: the search must try many orders
  EXPECT_EQ(check_linearizable(h, 100).result, LinearizableResult::kUnknown);
}

raft::Entry entry(int64_t index, int64_t term) {
  return raft::Entry{raft::Term(term), raft::LogIndex(index), raft::EntryKind::kNormal, {}};
}

TEST(SimDisk, CrashLosesOnlyUnsyncedWrites) {
  SimDisk disk;
  disk.write(DiskRecord{DiskRecord::Kind::kEntries, nullptr, {entry(1, 1), entry(2, 1)}, {}});
  disk.write(DiskRecord{DiskRecord::Kind::kHardState, nullptr, {}, raft::HardState{raft::Term(1), NodeId(1), raft::LogIndex(2)}});
  disk.sync();
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SimDisk d = disk;
    d.write(DiskRecord{DiskRecord::Kind::kEntries, nullptr, {entry(3, 2), entry(4, 2)}, {}});
    Rng rng(seed);
    d.crash(rng);
    raft::PersistentState st = d.recover();
    EXPECT_EQ(st.hard_state.term, raft::Term(1));
    ASSERT_GE(st.entries.size(), 2u);  // the synced prefix always survives
    EXPECT_LE(st.entries.size(), 4u);
  }
}

TEST(SimDisk, EntriesRecordReplacesSuffixAndSnapshotDropsPrefix) {
  SimDisk d;
  d.write(DiskRecord{DiskRecord::Kind::kEntries, nullptr, {entry(1, 1), entry(2, 1), entry(3, 1)}, {}});
  d.write(DiskRecord{DiskRecord::Kind::kEntries, nullptr, {entry(2, 2)}, {}});
  auto snap = std::make_shared<raft::Snapshot>(raft::Snapshot{raft::LogIndex(1), raft::Term(1), {}});
  d.write(DiskRecord{DiskRecord::Kind::kSnapshot, snap, {}, {}});
  d.sync();
  raft::PersistentState st = d.recover();
  ASSERT_EQ(st.entries.size(), 1u);
  EXPECT_EQ(st.entries[0].index, raft::LogIndex(2));
  EXPECT_EQ(st.entries[0].term, raft::Term(2));
  // A snapshot that does not match the stored log replaces all of it.
  auto other = std::make_shared<raft::Snapshot>(raft::Snapshot{raft::LogIndex(2), raft::Term(3), {}});
  d.write(DiskRecord{DiskRecord::Kind::kSnapshot, other, {}, {}});
  d.sync();
  EXPECT_TRUE(d.recover().entries.empty());
}

TEST(SimRun, SeedReplaysExactly) {
  RunOptions o;
  o.seed = 12345;
  o.trace = true;
  o.fault_ms = 3000;
  RunResult a = run_seed(o);
  RunResult b = run_seed(o);
  EXPECT_TRUE(a.ok) << a.failure;
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.trace, b.trace);
  EXPECT_GT(a.ops_completed, 0u);
}

TEST(Scenario, PassingScriptPasses) {
  ScenarioResult r = run_scenario("nodes 3\ncampaign 1\ntick 5\nexpect leader 1\nput 1 4 44\ntick 5\nexpect value 3 4 44\n");
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_FALSE(r.trace.empty());
}

TEST(Scenario, FailedExpectationFailsWithItsLine) {
  ScenarioResult r = run_scenario("nodes 3\ncampaign 1\ntick 5\nexpect leader 2\n");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("line 4"), std::string::npos) << r.error;
}

TEST(Scenario, MalformedLinesFail) {
  EXPECT_FALSE(run_scenario("nodes 3\ncrash 7\n").ok);
  EXPECT_FALSE(run_scenario("nodes 3\ntick\n").ok);
  EXPECT_FALSE(run_scenario("tick 3\n").ok);  // no cluster yet
  EXPECT_FALSE(run_scenario("nodes 3\nfrobnicate\n").ok);
}

}  // namespace
}  // namespace samsa::sim

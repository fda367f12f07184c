#include "controller/raft_log_storage.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "controller/quorum_state.h"
#include "io/posix_file_system.h"
#include "testing/sim_file_system.h"
#include "testing/sim_runtime.h"
#include "testing/sim_world.h"

namespace samsa {
namespace {

using raft::Entry;
using raft::EntryKind;
using raft::HardState;
using raft::LogIndex;
using raft::PersistentState;
using raft::Ready;
using raft::Term;

Entry entry(int64_t term, int64_t index, std::string_view data = "", EntryKind kind = EntryKind::kNormal) {
  return Entry{Term(term), LogIndex(index), kind, Bytes(data.begin(), data.end())};
}

raft::SnapshotPtr snapshot(int64_t index, int64_t term, std::string_view data) {
  return std::make_shared<raft::Snapshot>(raft::Snapshot{LogIndex(index), Term(term), Bytes(data.begin(), data.end())});
}

std::vector<int64_t> terms(const PersistentState& st) {
  std::vector<int64_t> out;
  for (const Entry& e : st.entries) out.push_back(e.term.value());
  return out;
}

LogIndex first_index(const PersistentState& st) {
  return st.entries.empty() ? LogIndex(-1) : st.entries.front().index;
}

TEST(QuorumState, RoundTripsKafkasShape) {
  HardState hs{Term(7), NodeId(2), LogIndex(41)};
  std::string text = encode_quorum_state(hs);
  EXPECT_EQ(text, R"({"leaderId":-1,"leaderEpoch":7,"votedId":2,"appliedOffset":41,"data_version":0})");
  auto back = decode_quorum_state(text);
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ(*back, hs);
  auto no_vote = decode_quorum_state(encode_quorum_state(HardState{Term(1), kNoNode, LogIndex(0)}));
  ASSERT_TRUE(no_vote.ok());
  EXPECT_EQ(no_vote->vote, kNoNode);
}

TEST(QuorumState, RefusesWhatIsNotOneFlatObjectOfIntegers) {
  for (std::string_view bad : {"", "{", "[]", R"({"leaderEpoch":1})", R"({"leaderEpoch":"1","votedId":1,"appliedOffset":0,"data_version":0})",
                               R"({"leaderEpoch":1,"votedId":1,"appliedOffset":0,"data_version":0} x)",
                               R"({"leaderEpoch":1,"votedId":1,"appliedOffset":0,"data_version":1})",
                               R"({"leaderEpoch":-1,"votedId":1,"appliedOffset":0,"data_version":0})",
                               R"({"leaderEpoch":1,"leaderEpoch":2,"votedId":1,"appliedOffset":0,"data_version":0})"}) {
    EXPECT_FALSE(decode_quorum_state(bad).ok()) << bad;
  }
}

class PosixRaftStorageTest : public ::testing::Test {
 protected:
  PosixRaftStorageTest()
      : root_(std::filesystem::temp_directory_path() /
              ("samsa-raftlog-" + std::to_string(::getpid()) + "-" + std::to_string(std::rand()))),
        dir_(root_ / "__cluster_metadata-0") {
    std::filesystem::remove_all(root_);
  }
  ~PosixRaftStorageTest() override { std::filesystem::remove_all(root_); }

  std::unique_ptr<RaftLogStorage> open() {
    auto s = RaftLogStorage::open(files_, dir_, clock_);
    EXPECT_TRUE(s.ok()) << s.error().to_string();
    return s.ok() ? std::move(*s) : nullptr;
  }
  PersistentState reopen(std::unique_ptr<RaftLogStorage>& s) {
    EXPECT_TRUE(s->close().ok());
    s = open();
    auto st = s->load();
    EXPECT_TRUE(st.ok());
    return st.ok() ? std::move(*st) : PersistentState{};
  }
  void persist(RaftLogStorage& s, Ready rd) {
    Status st = raft::persist_ready(s, rd);
    ASSERT_TRUE(st.ok()) << st.error().to_string();
  }

  std::filesystem::path root_;
  std::filesystem::path dir_;
  PosixFileSystem files_;
  ManualClock clock_{1000};
};

TEST_F(PosixRaftStorageTest, FirstStartIsEmpty) {
  auto s = open();
  auto st = s->load();
  ASSERT_TRUE(st.ok());
  EXPECT_TRUE(st->entries.empty());
  EXPECT_EQ(st->snapshot, nullptr);
  EXPECT_EQ(st->hard_state, HardState{});
}

TEST_F(PosixRaftStorageTest, EntriesAndHardStateSurviveReopen) {
  auto s = open();
  Ready rd;
  rd.entries = {entry(1, 1, "", EntryKind::kLeaderChange), entry(1, 2, "a"), entry(2, 3, "", EntryKind::kLeaderChange),
                entry(2, 4, "bb")};
  rd.hard_state = HardState{Term(2), NodeId(3), LogIndex(2)};
  persist(*s, rd);
  PersistentState st = reopen(s);
  EXPECT_EQ(st.entries, rd.entries);
  EXPECT_EQ(st.hard_state, *rd.hard_state);
  // Kafka's names and shape on disk: the Log's files, quorum-state beside them.
  EXPECT_TRUE(std::filesystem::exists(dir_ / "00000000000000000000.log"));
  EXPECT_TRUE(std::filesystem::exists(dir_ / "quorum-state"));
}

TEST_F(PosixRaftStorageTest, AConflictingAppendReplacesTheSuffix) {
  auto s = open();
  Ready rd;
  for (int i = 1; i <= 5; ++i) rd.entries.push_back(entry(1, i, "old"));
  persist(*s, rd);
  Ready conflict;
  conflict.entries = {entry(3, 3, "new"), entry(3, 4, "new")};
  persist(*s, conflict);
  PersistentState st = reopen(s);
  EXPECT_EQ(terms(st), (std::vector<int64_t>{1, 1, 3, 3}));
  EXPECT_EQ(st.entries.back(), entry(3, 4, "new"));
  // And appending again after it continues at 5.
  Ready more;
  more.entries = {entry(3, 5, "x")};
  persist(*s, more);
  EXPECT_EQ(terms(reopen(s)), (std::vector<int64_t>{1, 1, 3, 3, 3}));
}

TEST_F(PosixRaftStorageTest, ALocalCompactionKeepsTheEntriesAfterTheSnapshot) {
  auto s = open();
  Ready rd;
  for (int i = 1; i <= 6; ++i) rd.entries.push_back(entry(i <= 3 ? 1 : 2, i, "e"));
  persist(*s, rd);
  Ready compact;
  compact.snapshot = snapshot(4, 2, "state@4");
  persist(*s, compact);
  PersistentState st = reopen(s);
  ASSERT_NE(st.snapshot, nullptr);
  EXPECT_EQ(st.snapshot->index, LogIndex(4));
  EXPECT_EQ(st.snapshot->data, Bytes({'s', 't', 'a', 't', 'e', '@', '4'}));
  EXPECT_EQ(first_index(st), LogIndex(5));
  EXPECT_EQ(terms(st), (std::vector<int64_t>{2, 2}));
  EXPECT_TRUE(std::filesystem::exists(dir_ / "00000000000000000004-0000000002.checkpoint"));
  // A later snapshot replaces the file.
  Ready again;
  again.snapshot = snapshot(6, 2, "state@6");
  persist(*s, again);
  st = reopen(s);
  EXPECT_EQ(st.snapshot->index, LogIndex(6));
  EXPECT_TRUE(st.entries.empty());
  EXPECT_FALSE(std::filesystem::exists(dir_ / "00000000000000000004-0000000002.checkpoint"));
  Ready next;
  next.entries = {entry(3, 7, "after")};
  persist(*s, next);
  EXPECT_EQ(first_index(reopen(s)), LogIndex(7));
}

TEST_F(PosixRaftStorageTest, ALeadersSnapshotReplacesADivergentLog) {
  auto s = open();
  Ready rd;
  for (int i = 1; i <= 5; ++i) rd.entries.push_back(entry(1, i, "stale"));
  persist(*s, rd);
  Ready install;
  install.snapshot = snapshot(4, 2, "leader");  // our entry 4 has term 1: divergent
  install.entries = {entry(2, 5, "fresh")};
  persist(*s, install);
  PersistentState st = reopen(s);
  ASSERT_NE(st.snapshot, nullptr);
  EXPECT_EQ(st.snapshot->term, Term(2));
  ASSERT_EQ(st.entries.size(), 1u);
  EXPECT_EQ(st.entries[0], entry(2, 5, "fresh"));
}

TEST_F(PosixRaftStorageTest, TheCommitOnDiskNeverPointsPastTheEntries) {
  auto s = open();
  Ready rd;
  rd.entries = {entry(1, 1), entry(1, 2)};
  rd.hard_state = HardState{Term(1), NodeId(1), LogIndex(9)};  // more than is stored
  persist(*s, rd);
  EXPECT_EQ(reopen(s).hard_state.commit, LogIndex(2));
}

// --- on the simulated disk: power loss ---

class SimRaftStorageTest : public ::testing::Test {
 protected:
  explicit SimRaftStorageTest(uint64_t seed = 3) : world_(seed), host_(world_.add_host()) {
    world_.volume(host_).create_durable_directories("/meta");
  }
  std::unique_ptr<RaftLogStorage> open() {
    sim::SimRuntime& rt = world_.runtime(host_);
    auto s = RaftLogStorage::open(rt.files(), "/meta/__cluster_metadata-0", rt.clock());
    EXPECT_TRUE(s.ok()) << s.error().to_string();
    return s.ok() ? std::move(*s) : nullptr;
  }
  PersistentState power_loss_and_load(std::unique_ptr<RaftLogStorage>& s) {
    world_.crash(host_, sim::CrashKind::kPowerLoss);
    s.reset();
    world_.restart(host_);
    s = open();
    if (!s) return {};
    auto st = s->load();
    EXPECT_TRUE(st.ok());
    return st.ok() ? std::move(*st) : PersistentState{};
  }

  sim::SimWorld world_;
  sim::HostId host_;
};

// Over many seeds: what a Ready persisted (and synced) survives a power
// loss; the next Ready's writes, not synced, survive only as a prefix.
TEST(SimRaftStoragePowerLoss, WhatWasSyncedSurvivesTheRestIsAPrefix) {
  int lost_some = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    sim::SimWorld world(seed);
    sim::HostId host = world.add_host();
    world.volume(host).create_durable_directories("/meta");
    auto open = [&] {
      sim::SimRuntime& rt = world.runtime(host);
      auto s = RaftLogStorage::open(rt.files(), "/meta/__cluster_metadata-0", rt.clock());
      EXPECT_TRUE(s.ok()) << s.error().to_string();
      return s.ok() ? std::move(*s) : nullptr;
    };
    auto s = open();
    ASSERT_NE(s, nullptr);
    Ready synced;
    for (int i = 1; i <= 4; ++i) synced.entries.push_back(entry(1, i, "synced"));
    synced.hard_state = HardState{Term(1), NodeId(2), LogIndex(3)};
    ASSERT_TRUE(raft::persist_ready(*s, synced).ok());
    // The next Ready, cut by the power loss before its sync: a conflicting
    // rewrite of the uncommitted tail, more entries and a new vote.
    std::vector<Entry> unsynced = {entry(2, 4, "next"), entry(2, 5, "next"), entry(2, 6, "next")};
    ASSERT_TRUE(s->append(unsynced).ok());
    ASSERT_TRUE(s->save_hard_state(HardState{Term(2), NodeId(3), LogIndex(5)}).ok());
    world.crash(host, sim::CrashKind::kPowerLoss);
    s.reset();
    world.restart(host);
    s = open();
    ASSERT_NE(s, nullptr);
    auto st = s->load();
    ASSERT_TRUE(st.ok());
    // Never synced: the hard state stays the synced one (no vote changes
    // without a sync), and entries 1..3 (committed) are there.
    EXPECT_EQ(st->hard_state, *synced.hard_state);
    ASSERT_GE(st->entries.size(), 3u);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(st->entries[size_t(i)], synced.entries[size_t(i)]);
    // Entry 4 is the old or the new one, and what follows is a prefix of the new.
    if (st->entries.size() >= 4) {
      bool old4 = st->entries[3] == synced.entries[3];
      EXPECT_TRUE(old4 || st->entries[3] == unsynced[0]);
      for (size_t i = 4; i < st->entries.size(); ++i) {
        EXPECT_FALSE(old4);
        EXPECT_EQ(st->entries[i], unsynced[i - 3]);
      }
      if (st->entries.size() < 6) ++lost_some;
    } else {
      ++lost_some;
    }
  }
  EXPECT_GT(lost_some, 0);  // the disk did lose unsynced writes in some runs
}

TEST_F(SimRaftStorageTest, AHardStateIsDurableOnlyAfterSync) {
  auto s = open();
  ASSERT_TRUE(s->save_hard_state(HardState{Term(5), NodeId(1), LogIndex(0)}).ok());
  EXPECT_EQ(power_loss_and_load(s).hard_state, HardState{});
  ASSERT_TRUE(s->save_hard_state(HardState{Term(5), NodeId(1), LogIndex(0)}).ok());
  ASSERT_TRUE(s->sync().ok());
  EXPECT_EQ(power_loss_and_load(s).hard_state, (HardState{Term(5), NodeId(1), LogIndex(0)}));
}

// A power loss after the leader's snapshot is durable but before the log's
// truncation is: load() discards the divergent log as install would have.
TEST_F(SimRaftStorageTest, AnInterruptedInstallFinishesAtLoad) {
  auto s = open();
  Ready rd;
  for (int i = 1; i <= 5; ++i) rd.entries.push_back(entry(1, i, "stale"));
  ASSERT_TRUE(raft::persist_ready(*s, rd).ok());
  // The log's segment files cannot be removed: the install stops (the node
  // would halt) after the snapshot file, before the truncation.
  sim::DiskFault fault;
  fault.ops = sim::kFsRemove | sim::kFsRename | sim::kFsTruncate;
  fault.path_contains = "/00000000000000000000.";  // segment 0, not the snapshot
  world_.volume(host_).add_fault(fault);
  EXPECT_FALSE(s->install_snapshot(snapshot(4, 2, "leader")).ok());
  world_.volume(host_).clear_faults();
  PersistentState st = power_loss_and_load(s);
  ASSERT_NE(st.snapshot, nullptr);  // write_file_atomic made it durable
  EXPECT_EQ(st.snapshot->index, LogIndex(4));
  EXPECT_TRUE(st.entries.empty()) << "kept " << st.entries.size() << " entries of the divergent log";
  // And the repaired log takes the leader's next entry.
  Ready next;
  next.entries = {entry(2, 5, "fresh")};
  ASSERT_TRUE(raft::persist_ready(*s, next).ok());
  st = power_loss_and_load(s);
  ASSERT_EQ(st.entries.size(), 1u);
  EXPECT_EQ(st.entries[0], entry(2, 5, "fresh"));
}

TEST_F(SimRaftStorageTest, AnInterruptedCompactionKeepsTheEntries) {
  auto s = open();
  Ready rd;
  for (int i = 1; i <= 5; ++i) rd.entries.push_back(entry(1, i, "e"));
  ASSERT_TRUE(raft::persist_ready(*s, rd).ok());
  ASSERT_TRUE(s->install_snapshot(snapshot(3, 1, "s3")).ok());  // no sync
  PersistentState st = power_loss_and_load(s);
  ASSERT_NE(st.snapshot, nullptr);
  EXPECT_EQ(first_index(st), LogIndex(4));
  EXPECT_EQ(terms(st), (std::vector<int64_t>{1, 1}));
}

}  // namespace
}  // namespace samsa

// RaftDriver's Ready discipline, one host: every message is sent and every
// entry applied only after the storage's sync(); a storage failure stops the
// driver before it sends or applies anything of that Ready.

#include "controller/raft_driver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "controller/raft_log_storage.h"
#include "testing/sim_runtime.h"
#include "testing/sim_world.h"

namespace samsa {
namespace {

// Wraps the real storage and knows what is durable: the term, vote and
// last entry as of the last successful sync(). It can fail the next sync().
class WatchedStorage final : public raft::RaftStorage {
 public:
  explicit WatchedStorage(raft::RaftStorage& inner) : inner_(inner) {}
  Result<raft::PersistentState> load() override {
    auto st = inner_.load();
    if (st.ok()) {
      durable = st->hard_state;
      durable_last = st->entries.empty() ? (st->snapshot ? st->snapshot->index : raft::kNoIndex)
                                         : st->entries.back().index;
      written = durable;
      written_last = durable_last;
    }
    return st;
  }
  Status install_snapshot(const raft::SnapshotPtr& s) override {
    written_last = std::max(written_last, s->index);
    return inner_.install_snapshot(s);
  }
  Status append(std::span<const raft::Entry> entries) override {
    written_last = entries.back().index;
    return inner_.append(entries);
  }
  Status save_hard_state(const raft::HardState& hs) override {
    written = hs;
    return inner_.save_hard_state(hs);
  }
  Status sync() override {
    ++syncs;
    if (fail_sync) return Error(ErrorKind::kIo, "fsync: injected EIO");
    RETURN_IF_ERROR(inner_.sync());
    durable = written;
    durable_last = written_last;
    return ok_status();
  }

  raft::HardState durable;
  raft::LogIndex durable_last;
  bool fail_sync = false;
  int syncs = 0;

 private:
  raft::RaftStorage& inner_;
  raft::HardState written;
  raft::LogIndex written_last;
};

// Transport and state machine: each message and each applied entry must be
// backed by durable state (ready.h steps 2 and 3).
struct Recorder final : RaftTransport, RaftStateMachine {
  explicit Recorder(const WatchedStorage& s) : storage(s) {}
  void send(const raft::Message& m) override {
    if (m.type == raft::MessageType::kVote && !m.pre_vote) {
      EXPECT_EQ(storage.durable.term, m.term) << "asked for votes in a term not yet on disk";
      EXPECT_EQ(storage.durable.vote, m.from) << "asked for votes before its own vote was on disk";
    }
    if (m.type == raft::MessageType::kAppend && !m.entries.empty()) {
      EXPECT_GE(storage.durable_last, m.entries.back().index) << "replicated an entry not on its own disk";
    }
    sent.push_back(m);
  }
  void restore(const raft::Snapshot&) override {}
  void apply(const raft::Entry& e) override {
    EXPECT_GE(storage.durable_last, e.index) << "applied " << e.index.value() << " before its fsync";
    applied.push_back(e);
  }
  const WatchedStorage& storage;
  std::vector<raft::Message> sent;
  std::vector<raft::Entry> applied;
};

class RaftDriverTest : public ::testing::Test {
 protected:
  RaftDriverTest() : world_(5), host_(world_.add_host()) {
    world_.volume(host_).create_durable_directories("/meta");
    sim::SimRuntime& rt = world_.runtime(host_);
    auto opened = RaftLogStorage::open(rt.files(), "/meta/__cluster_metadata-0", rt.clock());
    EXPECT_TRUE(opened.ok());
    log_storage_ = std::move(*opened);
    storage_ = std::make_unique<WatchedStorage>(*log_storage_);
    recorder_ = std::make_unique<Recorder>(*storage_);
  }
  ~RaftDriverTest() override { driver_.reset(); }

  void start(std::vector<int> voters, bool pre_vote = true) {
    RaftDriverOptions options;
    options.raft.pre_vote = pre_vote;
    options.raft.id = NodeId(1);
    for (int v : voters) options.raft.voters.push_back(NodeId(v));
    options.tick_ms = 10;
    auto d = RaftDriver::start(world_.runtime(host_), *storage_, *recorder_, *recorder_, options);
    ASSERT_TRUE(d.ok());
    driver_ = std::move(*d);
  }

  sim::SimWorld world_;
  sim::HostId host_;
  std::unique_ptr<RaftLogStorage> log_storage_;
  std::unique_ptr<WatchedStorage> storage_;
  std::unique_ptr<Recorder> recorder_;
  std::unique_ptr<RaftDriver> driver_;
};

TEST_F(RaftDriverTest, ASingleVoterElectsItselfFromTicksAndAppliesAfterEachFsync) {
  start({1});
  ASSERT_TRUE(world_.run_until([&] { return driver_->node().role() == raft::Role::kLeader; }, 5'000));
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(driver_->propose(Bytes{uint8_t(i)}).accepted);
  }
  world_.run_for_ms(100);
  // The LeaderChange entry, then the five proposals, in order.
  ASSERT_EQ(recorder_->applied.size(), 6u);
  EXPECT_EQ(recorder_->applied[0].kind, raft::EntryKind::kLeaderChange);
  EXPECT_EQ(recorder_->applied[5].data, Bytes{4});
  EXPECT_GT(storage_->syncs, 5);
}

TEST_F(RaftDriverTest, VotesAreRequestedOnlyAfterTheTermIsOnDisk) {
  start({1, 2, 3}, /*pre_vote=*/false);  // each campaign bumps the term: a hard state to persist
  driver_->campaign();
  world_.run_for_ms(500);  // the peers never answer: it campaigns again and again
  int vote_requests = 0;
  for (const raft::Message& m : recorder_->sent) vote_requests += m.type == raft::MessageType::kVote && !m.pre_vote;
  EXPECT_GT(vote_requests, 2);
}

TEST_F(RaftDriverTest, AFailedFsyncStopsItBeforeItSendsOrApplies) {
  start({1, 2, 3});
  storage_->fail_sync = true;
  size_t sent_before = recorder_->sent.size();
  driver_->campaign();  // a Ready with a new term and vote: its fsync fails
  EXPECT_TRUE(driver_->failed());
  EXPECT_EQ(recorder_->sent.size(), sent_before);
  int syncs = storage_->syncs;
  world_.run_for_ms(1'000);  // no more ticks, no more Readies
  EXPECT_EQ(storage_->syncs, syncs);
  driver_->receive(raft::Message{});  // ignored
  EXPECT_EQ(recorder_->sent.size(), sent_before);
}

}  // namespace
}  // namespace samsa

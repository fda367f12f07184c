// RaftObserverDriver on the simulated runtime: a metadata-log observer
// pulling from a one-voter quorum (a RaftDriver) over a fetch transport
// that answers with raft::answer_fetch a millisecond later; what it applies
// is on its disk first; it restarts from its disk; a failed fsync stops it.

#include "controller/raft_observer_driver.h"

#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "controller/raft_log_storage.h"
#include "testing/sim_runtime.h"
#include "testing/sim_world.h"

namespace samsa {
namespace {

struct Applied final : RaftStateMachine {
  void restore(const raft::Snapshot&) override { entries.clear(); }
  void apply(const raft::Entry& e) override {
    if (durable_last) {
      EXPECT_GE(durable_last(), e.index) << "applied before its fsync";
    }
    entries.push_back(e);
  }
  std::function<raft::LogIndex()> durable_last;
  std::vector<raft::Entry> entries;
};

struct NoPeers final : RaftTransport {
  void send(const raft::Message&) override {}
};

// Fails the next sync() when asked; counts syncs; knows the last entry synced.
class CountingStorage final : public raft::RaftStorage {
 public:
  explicit CountingStorage(raft::RaftStorage& inner) : inner_(inner) {}
  Result<raft::PersistentState> load() override { return inner_.load(); }
  Status install_snapshot(const raft::SnapshotPtr& s) override { return inner_.install_snapshot(s); }
  Status append(std::span<const raft::Entry> entries) override {
    written_last_ = entries.back().index;
    return inner_.append(entries);
  }
  Status save_hard_state(const raft::HardState& hs) override { return inner_.save_hard_state(hs); }
  Status sync() override {
    ++syncs;
    if (fail_sync) return Error(ErrorKind::kIo, "fsync: injected EIO");
    RETURN_IF_ERROR(inner_.sync());
    durable_last = std::max(durable_last, written_last_);
    return ok_status();
  }
  int syncs = 0;
  bool fail_sync = false;
  raft::LogIndex durable_last;

 private:
  raft::RaftStorage& inner_;
  raft::LogIndex written_last_;
};

class RaftObserverDriverTest : public ::testing::Test, public RaftFetchTransport {
 protected:
  RaftObserverDriverTest() : world_(3), voter_host_(world_.add_host()), observer_host_(world_.add_host()) {
    voter_storage_ = open_storage(voter_host_);
    observer_log_ = open_storage(observer_host_);
    observer_storage_ = std::make_unique<CountingStorage>(*observer_log_);
    RaftDriverOptions options;
    options.raft.id = NodeId(1);
    options.raft.voters = {NodeId(1)};
    options.tick_ms = 10;
    auto d = RaftDriver::start(world_.runtime(voter_host_), *voter_storage_, no_peers_, voter_applied_, options);
    EXPECT_TRUE(d.ok());
    voter_ = std::move(*d);
    observer_applied_.durable_last = [this] { return observer_storage_->durable_last; };
  }
  ~RaftObserverDriverTest() override {
    observer_.reset();
    voter_.reset();
  }

  std::unique_ptr<RaftLogStorage> open_storage(sim::HostId host) {
    world_.volume(host).create_durable_directories("/meta");
    sim::SimRuntime& rt = world_.runtime(host);
    auto opened = RaftLogStorage::open(rt.files(), "/meta/__cluster_metadata-0", rt.clock());
    EXPECT_TRUE(opened.ok());
    return std::move(*opened);
  }

  void start_observer() {
    RaftObserverDriverOptions options;
    options.observer.id = NodeId(4);
    options.observer.voters = {NodeId(1)};
    options.tick_ms = 10;
    auto d = RaftObserverDriver::start(world_.runtime(observer_host_), *observer_storage_, *this, observer_applied_,
                                       options);
    ASSERT_TRUE(d.ok()) << d.error().to_string();
    observer_ = std::move(*d);
  }

  // The fetch transport: answered by the voter 1 ms later (never from
  // inside the observer's Ready).
  void send(const raft::FetchRequest& request) override {
    ++fetches;
    world_.runtime(observer_host_).add_timer(1, [this, request] {
      if (observer_) observer_->receive(raft::answer_fetch(voter_->node(), request, 1024));
    });
  }

  void propose(int n) {
    ASSERT_TRUE(world_.run_until([&] { return voter_->node().role() == raft::Role::kLeader; }, 5'000));
    for (int i = 0; i < n; ++i) ASSERT_TRUE(voter_->propose(Bytes{uint8_t(i)}).accepted);
  }

  sim::SimWorld world_;
  sim::HostId voter_host_;
  sim::HostId observer_host_;
  std::unique_ptr<RaftLogStorage> voter_storage_;
  std::unique_ptr<RaftLogStorage> observer_log_;
  std::unique_ptr<CountingStorage> observer_storage_;
  NoPeers no_peers_;
  Applied voter_applied_;
  Applied observer_applied_;
  std::unique_ptr<RaftDriver> voter_;
  std::unique_ptr<RaftObserverDriver> observer_;
  int fetches = 0;
};

TEST_F(RaftObserverDriverTest, PullsFromTheLeaderAndAppliesAfterEachFsync) {
  start_observer();
  propose(5);
  ASSERT_TRUE(world_.run_until([&] { return observer_applied_.entries.size() == 6; }, 2'000));
  EXPECT_EQ(observer_applied_.entries, voter_applied_.entries);
  EXPECT_EQ(observer_->observer().leader(), NodeId(1));
  // Caught up, it keeps asking, without an fsync per fetch.
  int syncs = observer_storage_->syncs;
  int asked = fetches;
  world_.run_for_ms(500);
  EXPECT_GT(fetches, asked + 10);
  EXPECT_EQ(observer_storage_->syncs, syncs);
}

TEST_F(RaftObserverDriverTest, RestartsFromItsDisk) {
  start_observer();
  propose(3);
  ASSERT_TRUE(world_.run_until([&] { return observer_applied_.entries.size() == 4; }, 2'000));
  observer_.reset();
  observer_applied_.entries.clear();
  // As after a process restart: the storage opened again.
  raft::LogIndex durable = observer_storage_->durable_last;
  observer_storage_.reset();
  observer_log_.reset();
  observer_log_ = open_storage(observer_host_);
  observer_storage_ = std::make_unique<CountingStorage>(*observer_log_);
  observer_storage_->durable_last = durable;
  start_observer();
  EXPECT_EQ(observer_->observer().log().last_index(), raft::LogIndex(4));
  ASSERT_TRUE(voter_->propose(Bytes{9}).accepted);
  // Its own committed entries are applied again (the image is rebuilt), then the new one.
  ASSERT_TRUE(world_.run_until([&] { return observer_applied_.entries.size() == 5; }, 2'000));
  EXPECT_EQ(observer_applied_.entries, voter_applied_.entries);
}

TEST_F(RaftObserverDriverTest, AFailedFsyncStopsItBeforeItApplies) {
  start_observer();
  observer_storage_->fail_sync = true;
  propose(2);
  ASSERT_TRUE(world_.run_until([&] { return observer_->failed(); }, 2'000));
  EXPECT_TRUE(observer_applied_.entries.empty());
  int asked = fetches;
  world_.run_for_ms(500);  // no more ticks, no more fetches
  EXPECT_LE(fetches, asked);
}

}  // namespace
}  // namespace samsa

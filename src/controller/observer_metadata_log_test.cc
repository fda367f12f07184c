// ObserverMetadataLog on the simulated runtime: a broker-only node's
// metadata log pulling from a one-voter RaftMetadataLog (fetches answered
// by raft::answer_fetch 1 ms later): its image follows the quorum's, it
// snapshots its own image, reopens from its dir with the same image, a
// late observer starts from the leader's snapshot, and it never proposes.

#include "controller/observer_metadata_log.h"

#include <gtest/gtest.h>

#include <string>

#include "controller/raft_metadata_log.h"
#include "testing/sim_runtime.h"
#include "testing/sim_world.h"

namespace samsa {
namespace {

const char* const kDir = "/meta/__cluster_metadata-0";

struct NoPeers final : RaftTransport {
  void send(const raft::Message&) override {}
};

// Answers each observer's fetch from the voter, a millisecond later.
struct Fetcher final : RaftFetchTransport {
  Fetcher(sim::SimRuntime& rt, std::unique_ptr<RaftMetadataLog>& voter) : rt(rt), voter(voter) {}
  void send(const raft::FetchRequest& request) override {
    rt.add_timer(1, [this, request] {
      if (log) log->receive(raft::answer_fetch(voter->driver().node(), request, 1024));
    });
  }
  sim::SimRuntime& rt;
  std::unique_ptr<RaftMetadataLog>& voter;
  ObserverMetadataLog* log = nullptr;
};

class ObserverMetadataLogTest : public ::testing::Test {
 protected:
  ObserverMetadataLogTest() : world_(11), voter_host_(world_.add_host()) {}

  void start_voter(int64_t snapshot_every) {
    world_.volume(voter_host_).create_durable_directories("/meta");
    RaftMetadataLogOptions o;
    o.driver.raft.id = NodeId(1);
    o.driver.raft.voters = {NodeId(1)};
    o.driver.tick_ms = 10;
    o.snapshot_every_entries = snapshot_every;
    auto v = RaftMetadataLog::open(world_.runtime(voter_host_), kDir, no_peers_, o);
    ASSERT_TRUE(v.ok());
    voter_ = std::move(*v);
    ASSERT_TRUE(world_.run_until([&] { return voter_->active(); }, 5'000));
  }
  ~ObserverMetadataLogTest() override {
    observers_.clear();
    fetchers_.clear();
    voter_.reset();
  }

  ObserverMetadataLog& open_observer(sim::HostId host) {
    world_.volume(host).create_durable_directories("/meta");
    fetchers_.push_back(std::make_unique<Fetcher>(world_.runtime(host), voter_));
    ObserverMetadataLogOptions o;
    o.driver.observer.id = NodeId(4);
    o.driver.observer.voters = {NodeId(1)};
    o.driver.tick_ms = 10;
    o.snapshot_every_entries = 3;
    auto log = ObserverMetadataLog::open(world_.runtime(host), kDir, *fetchers_.back(), o);
    EXPECT_TRUE(log.ok()) << log.error().to_string();
    observers_.push_back(std::move(*log));
    fetchers_.back()->log = observers_.back().get();
    return *observers_.back();
  }

  void create_topic(int i) {
    Uuid id;
    id.bytes[0] = uint8_t(i + 1);
    bool done = false;
    voter_->propose(0, {TopicRecord{"t" + std::to_string(i), id}}, [&](Result<Offset> r) {
      EXPECT_TRUE(r.ok());
      done = true;
    });
    ASSERT_TRUE(world_.run_until([&] { return done; }, 2'000));
  }

  bool follows(const ObserverMetadataLog& log) {
    return world_.run_until([&] { return log.image().topics().size() == voter_->image().topics().size(); }, 2'000);
  }

  sim::SimWorld world_;
  sim::HostId voter_host_;
  NoPeers no_peers_;
  std::unique_ptr<RaftMetadataLog> voter_;
  std::vector<std::unique_ptr<Fetcher>> fetchers_;
  std::vector<std::unique_ptr<ObserverMetadataLog>> observers_;
};

TEST_F(ObserverMetadataLogTest, ItsImageFollowsTheQuorumAndSurvivesAReopen) {
  start_voter(1000);  // the leader never compacts: the observer's snapshots are its own
  sim::HostId host = world_.add_host();
  ObserverMetadataLog& log = open_observer(host);
  for (int i = 0; i < 10; ++i) create_topic(i);
  ASSERT_TRUE(follows(log));
  EXPECT_EQ(log.image().topics().size(), 10u);
  ASSERT_TRUE(world_.run_until([&] { return log.snapshots_taken() > 0; }, 2'000));  // posted after the apply
  EXPECT_GT(log.driver().observer().log().snapshot_index(), raft::kNoIndex);
  EXPECT_FALSE(log.active());
  bool refused = false;
  log.propose(0, {TopicRecord{"x", Uuid{}}}, [&](Result<Offset> r) {
    refused = !r.ok() && MetadataLog::is_not_controller(r.error());
  });
  EXPECT_TRUE(refused);

  // Reopened from its dir: the same image at once (its snapshot, then its
  // committed entries), then what the quorum commits next.
  ASSERT_TRUE(log.shutdown().ok());
  fetchers_.back()->log = nullptr;
  observers_.pop_back();
  ObserverMetadataLog& again = open_observer(host);
  EXPECT_EQ(again.image().topics().size(), 10u);
  create_topic(10);
  ASSERT_TRUE(follows(again));
  EXPECT_EQ(again.image().topics().size(), 11u);
}

TEST_F(ObserverMetadataLogTest, ALateObserverStartsFromTheLeadersSnapshot) {
  start_voter(4);
  for (int i = 0; i < 9; ++i) create_topic(i);
  ASSERT_GT(voter_->snapshots_taken(), 0u);
  ASSERT_GT(voter_->driver().node().log().snapshot_index(), raft::kNoIndex);
  ObserverMetadataLog& log = open_observer(world_.add_host());
  ASSERT_TRUE(follows(log));
  EXPECT_EQ(log.image().topics().size(), 9u);
  EXPECT_EQ(log.image().topics().count("t0"), 1u);
}

}  // namespace
}  // namespace samsa

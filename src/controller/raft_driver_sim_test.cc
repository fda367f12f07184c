// RaftDriver in the simulator: three SimWorld hosts, each a RaftDriver over
// RaftLogStorage on its simulated disk, an in-memory transport on the
// world's event queue (latency, loss), power-loss crashes and restarts,
// failed fsyncs (the driver stops, then the host loses power), snapshots. Checked after every event: at most one leader per term,
// committed entries never change (every node applies the same entry at an
// index), a granted vote is on disk when it is sent. At the end, with the
// faults healed: every node catches up to everything ever committed and the
// logs agree.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdio>
#include <map>
#include <memory>
#include <vector>

#include "controller/quorum_state.h"
#include "controller/raft_driver.h"
#include "controller/raft_log_storage.h"
#include "testing/sim_file_system.h"
#include "testing/sim_runtime.h"
#include "testing/sim_world.h"

namespace samsa {
namespace {

using raft::Entry;
using raft::LogIndex;
using raft::Term;
using sim::HostId;

constexpr int kNodes = 3;
const char* const kMetaDir = "/meta/__cluster_metadata-0";

uint64_t fnv(uint64_t h, ByteView bytes) {
  for (uint8_t b : bytes) h = (h ^ b) * 1099511628211ULL;
  return h;
}

// The state machine: a hash chain over the applied entries.
struct ChainMachine final : RaftStateMachine {
  LogIndex applied;
  uint64_t hash = 14695981039346656037ULL;
  std::function<void(const Entry&, uint64_t)> on_apply;

  void restore(const raft::Snapshot& s) override {
    ASSERT_EQ(s.data.size(), 8u);
    hash = 0;
    for (int i = 0; i < 8; ++i) hash = hash << 8 | s.data[size_t(i)];
    applied = s.index;
  }
  void apply(const Entry& e) override {
    ASSERT_EQ(e.index, applied + 1);
    hash = fnv(hash ^ uint64_t(e.term.value()), e.data);
    applied = e.index;
    if (on_apply) on_apply(e, hash);
  }
  Bytes snapshot() const {
    Bytes b(8);
    for (int i = 0; i < 8; ++i) b[size_t(i)] = uint8_t(hash >> (56 - 8 * i));
    return b;
  }
};

class Cluster;

struct Node : RaftTransport {
  Cluster* cluster = nullptr;
  HostId host;
  NodeId id;
  ChainMachine machine;
  std::unique_ptr<RaftLogStorage> storage;
  std::unique_ptr<RaftDriver> driver;
  void send(const raft::Message& m) override;
};

class Cluster {
 public:
  Cluster(uint64_t seed, bool check_vote_on_disk = true) : world(seed), check_vote_on_disk_(check_vote_on_disk) {
    world.set_record_trace(false);
    for (int i = 1; i <= kNodes; ++i) {
      auto n = std::make_unique<Node>();
      n->cluster = this;
      n->host = world.add_host();
      n->id = NodeId(i);
      world.volume(n->host).create_durable_directories("/meta");
      nodes.push_back(std::move(n));
    }
    for (auto& n : nodes) start(*n);
  }
  ~Cluster() {
    for (auto& n : nodes) {
      n->driver.reset();
      n->storage.reset();
    }
  }

  void start(Node& n) {
    sim::SimRuntime& rt = world.runtime(n.host);
    auto storage = RaftLogStorage::open(rt.files(), kMetaDir, rt.clock());
    if (!storage.ok() && faults) {  // an injected EIO during recovery: down again, retry later
      ++sync_failures;
      crash(n);
      restart_later(n);
      return;
    }
    ASSERT_TRUE(storage.ok()) << storage.error().to_string();
    n.storage = std::move(*storage);
    n.machine = ChainMachine();
    n.machine.on_apply = [this, &n](const Entry& e, uint64_t hash) { on_apply(n, e, hash); };
    RaftDriverOptions options;
    options.raft.id = n.id;
    for (int i = 1; i <= kNodes; ++i) options.raft.voters.push_back(NodeId(i));
    options.tick_ms = 10;
    auto driver = RaftDriver::start(rt, *n.storage, n, n.machine, options);
    ASSERT_TRUE(driver.ok()) << driver.error().to_string();
    n.driver = std::move(*driver);
  }

  void crash(Node& n) {
    world.crash(n.host, sim::CrashKind::kPowerLoss);
    n.driver.reset();
    n.storage.reset();
    ++crashes;
  }
  void restart(Node& n) {
    world.restart(n.host);
    start(n);
  }
  void restart_later(Node& n) {
    world.schedule(world.rng().range(50, 400) * 1'000'000, sim::kWorldHost, "restart", [this, &n] {
      if (!world.up(n.host)) restart(n);
    });
  }

  // Every committed entry, as first applied anywhere.
  void on_apply(Node& n, const Entry& e, uint64_t hash) {
    auto [it, inserted] = committed.emplace(e.index, std::pair{e.term, hash});
    if (!inserted && it->second != std::pair{e.term, hash}) {
      fail(fmt::format("n{} applied index {} term {} but term {} was committed there", n.id.value(), e.index.value(),
                       e.term.value(), it->second.first.value()));
    }
  }

  void deliver_later(const raft::Message& m) {
    Node& to = *nodes[size_t(m.to.value() - 1)];
    if (faults && world.rng().chance(0.05)) return;  // lost
    int64_t delay_ns = world.rng().range(200'000, 3'000'000);
    world.schedule(delay_ns, to.host, "raft " + std::string(raft::to_string(m.type)), [this, &to, m] {
      if (to.driver) to.driver->receive(m);
    });
  }

  // A granted vote must already bind the voter on disk (ready.h step 2).
  void check_sent(const Node& from, const raft::Message& m) {
    if (!check_vote_on_disk_ || m.type != raft::MessageType::kVoteResponse || m.reject || m.pre_vote) return;
    auto bytes = world.volume(from.host).read_whole(std::string(kMetaDir) + "/quorum-state");
    auto hs = bytes.ok() ? decode_quorum_state(std::string_view(reinterpret_cast<const char*>(bytes->data()),
                                                                bytes->size()))
                         : Result<raft::HardState>(bytes.error());
    if (!hs.ok() || hs->term != m.term || hs->vote != m.to) {
      fail(fmt::format("n{} granted its vote in term {} to n{} before quorum-state said so", from.id.value(),
                       m.term.value(), m.to.value()));
    }
  }

  void check_after_event() {
    for (auto& n : nodes) {
      if (!n->driver) continue;
      if (n->driver->failed()) {
        // An fsync failed (an injected EIO): the driver stopped before sending
        // or applying anything of that Ready. The machine then loses power
        // and comes back later: the unsynced writes are gone.
        if (!faults) fail(fmt::format("n{} failed: {}", n->id.value(), n->driver->failure()->to_string()));
        ++sync_failures;
        crash(*n);
        restart_later(*n);
        continue;
      }
      const raft::RaftNode& r = n->driver->node();
      if (r.role() != raft::Role::kLeader) continue;
      auto [it, inserted] = leaders.emplace(r.term(), n->id);
      if (!inserted && it->second != n->id) {
        fail(fmt::format("two leaders in term {}: n{} and n{}", r.term().value(), it->second.value(), n->id.value()));
      }
    }
  }

  Node* leader() {
    Node* best = nullptr;
    for (auto& n : nodes) {
      if (n->driver && n->driver->node().role() == raft::Role::kLeader &&
          (!best || n->driver->node().term() > best->driver->node().term())) {
        best = n.get();
      }
    }
    return best;
  }

  void fail(std::string what) {
    if (failure.empty()) failure = fmt::format("{}ms: {}", world.now_ms(), what);
  }

  // Runs events until `until_ms`, checking after each.
  void run_to(int64_t until_ms) {
    while (failure.empty() && world.now_ms() < until_ms && world.step()) check_after_event();
  }

  sim::SimWorld world;
  std::vector<std::unique_ptr<Node>> nodes;
  std::map<LogIndex, std::pair<Term, uint64_t>> committed;
  std::map<Term, NodeId> leaders;
  bool faults = true;
  int crashes = 0;
  int snapshots_sent = 0;
  int sync_failures = 0;
  std::string failure;

 private:
  bool check_vote_on_disk_;
};

void Node::send(const raft::Message& m) {
  if (m.type == raft::MessageType::kSnapshot) ++cluster->snapshots_sent;
  cluster->check_sent(*this, m);
  cluster->deliver_later(m);
}

// One run: proposals every 20 ms at the leader, a snapshot every 16 applied
// entries, a power loss every ~700 ms on a random node (down 50-400 ms);
// then 3 s without faults and 2 s without proposals.
std::string run(uint64_t seed, int* crashes_out, size_t* committed_out) {
  Cluster c(seed);
  uint64_t proposal = 0;
  bool proposing = true;
  std::function<void()> propose = [&] {
    if (!proposing) return;
    if (Node* l = c.leader()) {
      std::string data = fmt::format("p{}", proposal++);
      l->driver->propose(Bytes(data.begin(), data.end()));
    }
    c.world.schedule(20'000'000, sim::kWorldHost, "propose", propose);
  };
  c.world.schedule(20'000'000, sim::kWorldHost, "propose", propose);
  std::function<void()> compact = [&] {
    for (auto& n : c.nodes) {
      if (n->driver && n->machine.applied - n->driver->node().log().snapshot_index() >= 16) {
        n->driver->compact(n->machine.applied, n->machine.snapshot());
      }
    }
    c.world.schedule(50'000'000, sim::kWorldHost, "compact", compact);
  };
  c.world.schedule(50'000'000, sim::kWorldHost, "compact", compact);
  std::function<void()> chaos = [&] {
    if (!c.faults) return;
    Node& n = *c.nodes[c.world.rng().uniform(kNodes)];
    if (c.world.up(n.host)) {
      c.crash(n);
      c.restart_later(n);
    }
    c.world.schedule(c.world.rng().range(300, 1100) * 1'000'000, sim::kWorldHost, "chaos", chaos);
  };
  c.world.schedule(500'000'000, sim::kWorldHost, "chaos", chaos);
  // And now and then an fsync of the metadata dir fails (EIO), cutting a
  // Ready between its writes and its fsync.
  std::vector<uint64_t> sync_faults;
  for (auto& n : c.nodes) {
    sim::DiskFault fault;
    fault.ops = sim::kFsSync | sim::kFsSyncDir;
    fault.path_contains = kMetaDir;
    fault.chance = 0.002;
    sync_faults.push_back(c.world.volume(n->host).add_fault(fault));
  }

  c.run_to(15'000);
  c.faults = false;
  for (size_t i = 0; i < c.nodes.size(); ++i) c.world.volume(c.nodes[i]->host).remove_fault(sync_faults[i]);
  for (auto& n : c.nodes) {
    if (!c.world.up(n->host)) c.restart(*n);
  }
  c.run_to(18'000);
  proposing = false;
  c.run_to(20'000);
  if (!c.failure.empty()) return c.failure;

  // Healed: everyone has applied everything ever committed, and the logs agree.
  LogIndex max_committed = c.committed.empty() ? raft::kNoIndex : c.committed.rbegin()->first;
  for (auto& n : c.nodes) {
    if (n->machine.applied < max_committed) {
      return fmt::format("n{} applied up to {} of {} committed", n->id.value(), n->machine.applied.value(),
                         max_committed.value());
    }
  }
  for (int a = 0; a < kNodes; ++a) {
    for (int b = a + 1; b < kNodes; ++b) {
      const raft::RaftLog& x = c.nodes[size_t(a)]->driver->node().log();
      const raft::RaftLog& y = c.nodes[size_t(b)]->driver->node().log();
      LogIndex lo = std::max(x.first_index(), y.first_index());
      LogIndex hi = std::min(x.commit(), y.commit());
      for (LogIndex i = lo; i <= hi; ++i) {
        if (!(x.at(i) == y.at(i))) return fmt::format("n{} and n{} differ at committed index {}", a + 1, b + 1, i.value());
      }
    }
  }
  std::printf("seed %llu: %d power losses (%d after a failed fsync), %zu entries committed, %d snapshots sent, "
              "%zu terms with a leader\n",
              (unsigned long long)seed, c.crashes, c.sync_failures, c.committed.size(), c.snapshots_sent,
              c.leaders.size());
  *crashes_out = c.crashes;
  *committed_out = c.committed.size();
  return "";
}

TEST(RaftDriverSim, CommittedEntriesSurvivePowerLossAndLogsAgree) {
  int total_crashes = 0;
  size_t min_committed = SIZE_MAX;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    int crashes = 0;
    size_t committed = 0;
    std::string failure = run(seed, &crashes, &committed);
    ASSERT_EQ(failure, "") << "seed " << seed;
    total_crashes += crashes;
    min_committed = std::min(min_committed, committed);
  }
  EXPECT_GT(total_crashes, 30);      // the faults did happen
  EXPECT_GT(min_committed, 200u);    // and the quorum made progress through them
}

}  // namespace
}  // namespace samsa

// RaftNetworkTransport in the simulator: three SimWorld hosts, each a
// RaftDriver over RaftLogStorage whose messages go through the transport,
// the Kafka framing and the controller listener (ControllerApis on a
// FrameServer) over the simulated stream network. The quorum elects a
// leader, commits proposals, survives a partition that isolates the leader
// and a power loss + restart of the leader; DescribeQuorum describes it.
// Checked after every event: at most one leader per term, every node
// applies the same entry at an index. The same seed replays to the same
// trace hash.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "controller/controller_apis.h"
#include "controller/quorum_description.h"
#include "controller/raft_driver.h"
#include "controller/raft_fetch_client.h"
#include "controller/raft_log_storage.h"
#include "controller/raft_network_transport.h"
#include "controller/raft_observer_driver.h"
#include "io/frame_server.h"
#include "testing/sim_file_system.h"
#include "testing/sim_runtime.h"
#include "testing/sim_stream_net.h"
#include "testing/sim_world.h"

namespace samsa {
namespace {

using raft::Entry;
using raft::LogIndex;
using raft::Term;
using sim::HostId;

constexpr int kNodes = 3;
constexpr uint16_t kControllerPort = 9093;
const char* const kMetaDir = "/meta/__cluster_metadata-0";

uint64_t fnv(uint64_t h, ByteView bytes) {
  for (uint8_t b : bytes) h = (h ^ b) * 1099511628211ULL;
  return h;
}

// The state machine: a hash chain over the applied entries (no snapshots here).
struct ChainMachine final : RaftStateMachine {
  LogIndex applied;
  uint64_t hash = 14695981039346656037ULL;
  std::function<void(const Entry&, uint64_t)> on_apply;
  void restore(const raft::Snapshot&) override { FAIL() << "no snapshots in this test"; }
  void apply(const Entry& e) override {
    ASSERT_EQ(e.index, applied + 1);
    hash = fnv(hash ^ uint64_t(e.term.value()), e.data);
    applied = e.index;
    if (on_apply) on_apply(e, hash);
  }
};

struct Node {
  HostId host;
  NodeId id;
  ChainMachine machine;
  ControllerApis apis;
  std::unique_ptr<RaftLogStorage> storage;
  std::unique_ptr<RaftNetworkTransport> transport;
  std::unique_ptr<FrameServer> server;
  std::unique_ptr<RaftDriver> driver;
  bool up() const { return driver != nullptr; }
};

class Quorum {
 public:
  explicit Quorum(uint64_t seed) : world(seed) {
    world.set_record_trace(false);
    for (int i = 1; i <= kNodes; ++i) {
      auto n = std::make_unique<Node>();
      n->host = world.add_host();
      n->id = NodeId(i);
      world.volume(n->host).create_durable_directories("/meta");
      nodes.push_back(std::move(n));
    }
    for (auto& n : nodes) start(*n);
  }
  ~Quorum() {
    for (auto& n : nodes) stop(*n);
  }

  void start(Node& n) {
    sim::SimRuntime& rt = world.runtime(n.host);
    auto storage = RaftLogStorage::open(rt.files(), kMetaDir, rt.clock());
    ASSERT_TRUE(storage.ok()) << storage.error().to_string();
    n.storage = std::move(*storage);

    RaftNetworkTransportOptions t;
    t.identity.cluster_id = "sim-cluster";
    t.identity.self = n.id;
    for (auto& other : nodes) {
      t.identity.voters.push_back(other->id);
      if (other->id != n.id) t.peers.push_back(RaftPeer{other->id, world.address(other->host), kControllerPort});
    }
    n.transport = std::make_unique<RaftNetworkTransport>(rt, t);

    FrameServerOptions server;
    server.host = world.address(n.host);
    server.port = kControllerPort;
    auto listening = FrameServer::start(rt, server, n.apis);
    ASSERT_TRUE(listening.ok()) << listening.error().to_string();
    n.server = std::move(*listening);

    n.machine = ChainMachine();
    n.machine.on_apply = [this, &n](const Entry& e, uint64_t hash) { on_apply(n, e, hash); };
    RaftDriverOptions options;
    options.raft.id = n.id;
    options.raft.voters = t.identity.voters;
    options.tick_ms = 10;
    auto driver = RaftDriver::start(rt, *n.storage, *n.transport, n.machine, options);
    ASSERT_TRUE(driver.ok()) << driver.error().to_string();
    n.driver = std::move(*driver);
    n.transport->set_receiver([&n](const raft::Message& m) { n.driver->receive(m); });
    n.apis.set_transport(n.transport.get());
    n.apis.set_fetch_answerer(
        [&n](const raft::FetchRequest& r) { return raft::answer_fetch(n.driver->node(), r, kMaxRaftEntriesPerMessage); });
  }

  void stop(Node& n) {
    n.apis.set_fetch_answerer({});
    n.apis.set_transport(nullptr);
    n.server.reset();
    if (n.transport) n.transport->set_receiver({});
    n.driver.reset();
    n.transport.reset();
    n.storage.reset();
  }

  void crash(Node& n) {
    world.crash(n.host, sim::CrashKind::kPowerLoss);
    stop(n);
  }
  void restart(Node& n) {
    world.restart(n.host);
    start(n);
  }

  void on_apply(Node& n, const Entry& e, uint64_t hash) {
    auto [it, inserted] = committed.emplace(e.index, std::pair{e.term, hash});
    if (!inserted && it->second != std::pair{e.term, hash}) {
      fail(fmt::format("n{} applied index {} term {} but term {} was committed there", n.id.value(), e.index.value(),
                       e.term.value(), it->second.first.value()));
    }
  }

  void check_after_event() {
    for (auto& n : nodes) {
      if (!n->up()) continue;
      if (n->driver->failed()) fail(fmt::format("n{} failed: {}", n->id.value(), n->driver->failure()->to_string()));
      const raft::RaftNode& r = n->driver->node();
      if (r.role() != raft::Role::kLeader) continue;
      auto [it, inserted] = leaders.emplace(r.term(), n->id);
      if (!inserted && it->second != n->id) {
        fail(fmt::format("two leaders in term {}: n{} and n{}", r.term().value(), it->second.value(), n->id.value()));
      }
    }
  }

  // The leader of the highest term among the nodes that are up, except `besides`.
  Node* leader(NodeId besides = kNoNode) {
    Node* best = nullptr;
    for (auto& n : nodes) {
      if (!n->up() || n->id == besides || n->driver->node().role() != raft::Role::kLeader) continue;
      if (!best || n->driver->node().term() > best->driver->node().term()) best = n.get();
    }
    return best;
  }

  void fail(std::string what) {
    if (failure.empty()) failure = fmt::format("{}ms: {}", world.now_ms(), what);
  }

  // Runs events until `done` or `max_ms` of simulated time pass; checks after each.
  bool run_until(const std::function<bool()>& done, int64_t max_ms) {
    int64_t until = world.now_ms() + max_ms;
    while (failure.empty() && !done() && world.now_ms() < until && world.step()) check_after_event();
    return failure.empty() && done();
  }

  // Proposes `count` entries at whoever leads (besides `besides`), one per 20 ms.
  void propose_for(int count, NodeId besides = kNoNode) {
    for (int i = 0; i < count && failure.empty(); ++i) {
      if (Node* l = leader(besides)) {
        std::string data = fmt::format("p{}", proposal++);
        l->driver->propose(Bytes(data.begin(), data.end()));
      }
      int64_t until = world.now_ms() + 20;
      run_until([&] { return world.now_ms() >= until; }, 20);
    }
  }

  bool all_applied(LogIndex index, NodeId besides = kNoNode) {
    for (auto& n : nodes) {
      if (n->id == besides) continue;
      if (!n->up() || n->machine.applied < index) return false;
    }
    return true;
  }

  LogIndex max_committed() const { return committed.empty() ? raft::kNoIndex : committed.rbegin()->first; }

  sim::SimWorld world;
  std::vector<std::unique_ptr<Node>> nodes;
  std::map<LogIndex, std::pair<Term, uint64_t>> committed;
  std::map<Term, NodeId> leaders;
  uint64_t proposal = 0;
  std::string failure;
};

struct Outcome {
  std::string failure;
  uint64_t trace_hash = 0;
  size_t committed = 0;
  size_t terms = 0;
};

Outcome run(uint64_t seed) {
  Quorum q(seed);
  Outcome out;
  auto done = [&](std::string why) {
    out.failure = q.failure.empty() ? why : q.failure;
    return out;
  };
  // 1. A leader, and proposals committed on all three.
  if (!q.run_until([&] { return q.leader() != nullptr; }, 5000)) return done("no leader within 5 s");
  q.propose_for(20);
  LogIndex target = q.max_committed();
  if (target < LogIndex(20)) return done(fmt::format("only {} committed", target.value()));
  if (!q.run_until([&] { return q.all_applied(target); }, 5000)) return done("not applied everywhere");

  // DescribeQuorum from the leader: three voters, each at the leader's end.
  {
    Node* l = q.leader();
    QuorumDescription d = describe_raft_quorum(*l->driver, q.world.now_ms());
    if (!d.is_leader || d.leader != l->id || d.voters.size() != 3) return done("DescribeQuorum: wrong leader/voters");
    int64_t end = l->driver->node().log().last_index().value();
    bool caught_up = q.run_until(
        [&] {
          QuorumDescription now = describe_raft_quorum(*l->driver, q.world.now_ms());
          for (const auto& v : now.voters) {
            if (v.log_end_offset != end || v.last_fetch_ms < 0 || v.last_caught_up_ms < 0) return false;
          }
          return now.high_watermark == end;
        },
        2000);
    if (!caught_up) return done("DescribeQuorum: voters not reported caught up");
  }

  // 2. The leader is cut off: the other two elect a new one in a higher
  // term and keep committing; once healed, the old leader catches up.
  Node* old = q.leader();
  Term old_term = old->driver->node().term();
  q.world.net().isolate(old->host);
  if (!q.run_until([&] { Node* l = q.leader(old->id); return l && l->driver->node().term() > old_term; }, 10000)) {
    return done("no new leader while the old one is isolated");
  }
  q.propose_for(20, old->id);
  target = q.max_committed();
  if (!q.run_until([&] { return q.all_applied(target, old->id); }, 5000)) return done("majority did not commit");
  q.world.net().heal();
  if (!q.run_until([&] { return q.all_applied(target); }, 10000)) return done("old leader did not catch up");

  // 3. The leader loses power; the others elect and commit; it restarts
  // and catches up from its own disk and the new leader.
  Node* victim = q.leader();
  if (!victim) return done("no leader after the partition healed");
  q.crash(*victim);
  if (!q.run_until([&] { return q.leader(victim->id) != nullptr; }, 10000)) return done("no leader after the crash");
  q.propose_for(20, victim->id);
  q.restart(*victim);
  q.propose_for(10);
  target = q.max_committed();
  if (!q.run_until([&] { return q.all_applied(target); }, 10000)) return done("restarted node did not catch up");

  out.failure = q.failure;
  out.trace_hash = q.world.trace_hash();
  out.committed = q.committed.size();
  out.terms = q.leaders.size();
  uint64_t dropped = 0;
  for (auto& n : q.nodes) dropped += n->transport->stats().dropped_full;
  std::printf("seed %llu: %zu entries committed, %zu terms with a leader, %llu dropped (queue full), trace %016llx\n",
              (unsigned long long)seed, out.committed, out.terms, (unsigned long long)dropped,
              (unsigned long long)out.trace_hash);
  return out;
}

TEST(RaftNetworkTransportSim, ElectsCommitsSurvivesPartitionAndLeaderRestart) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    Outcome o = run(seed);
    ASSERT_EQ(o.failure, "") << "seed " << seed;
    EXPECT_GE(o.committed, 70u);
    EXPECT_GE(o.terms, 3u);  // the partition and the crash each made a new leader
  }
}

TEST(RaftNetworkTransportSim, TheSameSeedReplaysToTheSameTrace) {
  Outcome a = run(5);
  Outcome b = run(5);
  ASSERT_EQ(a.failure, "");
  EXPECT_EQ(a.trace_hash, b.trace_hash);
  EXPECT_EQ(a.committed, b.committed);
}

// A fourth host observes the quorum (a broker-only node's metadata log):
// RaftObserverDriver over RaftLogStorage, its fetches through
// RaftFetchClient (SamsaRaftFetch) to the voters' controller listeners.
struct Observer {
  HostId host;
  ChainMachine machine;
  std::unique_ptr<RaftLogStorage> storage;
  std::unique_ptr<RaftFetchClient> client;
  std::unique_ptr<RaftObserverDriver> driver;
};

std::string observe(uint64_t seed, uint64_t* trace = nullptr) {
  Quorum q(seed);
  Observer o;
  o.host = q.world.add_host();
  q.world.volume(o.host).create_durable_directories("/meta");
  sim::SimRuntime& rt = q.world.runtime(o.host);
  auto storage = RaftLogStorage::open(rt.files(), kMetaDir, rt.clock());
  if (!storage.ok()) return storage.error().to_string();
  o.storage = std::move(*storage);
  RaftFetchClientOptions c;
  c.cluster_id = "sim-cluster";
  c.self = NodeId(9);
  for (auto& n : q.nodes) c.voters.push_back(RaftPeer{n->id, q.world.address(n->host), kControllerPort});
  o.client = std::make_unique<RaftFetchClient>(rt, c);
  // Whatever it applies was committed there by the quorum.
  o.machine.on_apply = [&](const Entry& e, uint64_t hash) {
    auto it = q.committed.find(e.index);
    if (it == q.committed.end() || it->second != std::pair{e.term, hash}) {
      q.fail(fmt::format("the observer applied index {} term {}, not what the quorum committed", e.index.value(),
                         e.term.value()));
    }
  };
  RaftObserverDriverOptions options;
  options.observer.id = c.self;
  for (auto& n : q.nodes) options.observer.voters.push_back(n->id);
  options.observer.request_timeout_ticks = 20;
  options.tick_ms = 10;
  auto driver = RaftObserverDriver::start(rt, *o.storage, *o.client, o.machine, options);
  if (!driver.ok()) return driver.error().to_string();
  o.driver = std::move(*driver);
  o.client->set_receiver([&o](const raft::FetchResponse& r) { o.driver->receive(r); });
  auto caught_up = [&] { return o.machine.applied == q.max_committed(); };
  auto fail = [&](std::string why) { return q.failure.empty() ? why : q.failure; };

  if (!q.run_until([&] { return q.leader() != nullptr; }, 5000)) return fail("no leader within 5 s");
  q.propose_for(20);
  if (!q.run_until(caught_up, 5000)) return fail("the observer did not apply what was committed");
  NodeId first = q.leader()->id;
  if (o.driver->observer().leader() != first) return fail("the observer does not name the leader");

  // The leader loses power: the observer finds the new one and follows it.
  Node* victim = q.leader();
  q.crash(*victim);
  if (!q.run_until([&] { return q.leader(victim->id) != nullptr; }, 10000)) return fail("no leader after the crash");
  q.propose_for(20, victim->id);
  if (!q.run_until(caught_up, 10000)) return fail("the observer did not follow the new leader");
  if (o.driver->observer().leader() == victim->id) return fail("the observer still names the old leader");
  q.restart(*victim);
  q.propose_for(10);
  if (!q.run_until(caught_up, 10000)) return fail("the observer fell behind after the restart");
  if (o.machine.applied < LogIndex(50)) return fail("fewer than 50 entries observed");
  std::printf("seed %llu: the observer applied %lld entries, %llu fetches, %llu failures\n",
              (unsigned long long)seed, (long long)o.machine.applied.value(),
              (unsigned long long)o.client->stats().sent, (unsigned long long)o.client->stats().failures);
  if (trace) *trace = q.world.trace_hash();
  o.client->set_receiver({});
  o.driver.reset();
  return q.failure;
}

TEST(RaftNetworkTransportSim, AnObserverPullsTheLogAndFollowsANewLeader) {
  for (uint64_t seed = 1; seed <= 3; ++seed) EXPECT_EQ(observe(seed), "") << "seed " << seed;
}

TEST(RaftNetworkTransportSim, AnObservedRunReplaysToTheSameTrace) {
  uint64_t a = 0, b = 0;
  ASSERT_EQ(observe(7, &a), "");
  ASSERT_EQ(observe(7, &b), "");
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace samsa

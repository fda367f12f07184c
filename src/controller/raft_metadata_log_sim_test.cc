// RaftMetadataLog + Controller in the simulator: three controllers, each a
// Controller over a RaftMetadataLog over RaftLogStorage on its simulated
// disk, messages on the world's event queue (latency, 5% loss), power-loss
// crashes and restarts, the active controller cut off from the others or
// shut down gracefully (it resigns with EndQuorumEpoch, then stops), small
// snapshots (every 8 entries) so restarts and lagging nodes rebuild their
// image from one. A client creates topics at
// whichever node is the active controller.
//
// Checked after every event: at most one active controller per term; every
// node publishes the same batch at an offset (its image is a prefix of the
// committed log); no topic in any image is half-made (it has all the
// partitions its creation planned). At the end, with the faults healed:
// every acknowledged creation is in every node's image and the images are
// equal. The same seed gives the same trace.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "controller/metadata_codec.h"
#include "controller/quorum_controller.h"
#include "controller/raft_metadata_log.h"
#include "testing/sim_runtime.h"
#include "testing/sim_world.h"

namespace samsa {
namespace {

using sim::HostId;
using protocol::ErrorCode;

constexpr int kNodes = 3;
const char* const kMetaDir = "/meta/__cluster_metadata-0";
// Half the shortest election timeout (10 ticks of 10 ms): a hand-over within
// it is the resignation's doing, not an election after the timeout.
constexpr int64_t kResignBoundMs = 50;

uint64_t fnv(uint64_t h, ByteView bytes) {
  for (uint8_t b : bytes) h = (h ^ b) * 1099511628211ULL;
  return h;
}
uint64_t fnv(uint64_t h, const std::string& s) {
  return fnv(h, ByteView(reinterpret_cast<const uint8_t*>(s.data()), s.size()));
}

uint64_t fingerprint(const std::vector<MetadataRecord>& records) {
  uint64_t h = 14695981039346656037ULL;
  for (const auto& r : records) h = fnv(h, encode_metadata_record(r));
  return h;
}

class Cluster;

struct Node final : RaftTransport, MetadataListener {
  Cluster* cluster = nullptr;
  HostId host;
  NodeId id;
  std::unique_ptr<RaftMetadataLog> log;
  std::unique_ptr<Controller> controller;
  bool resigning = false;  // between resign() and its stop
  void send(const raft::Message& m) override;
  void on_committed(Offset offset, const std::vector<MetadataRecord>& records, uint64_t tag) override;
  void on_snapshot(Offset offset) override;
};

class Cluster {
 public:
  explicit Cluster(uint64_t seed) : world(seed) {
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
    for (auto& n : nodes) stop(*n);
  }

  void start(Node& n) {
    sim::SimRuntime& rt = world.runtime(n.host);
    RaftMetadataLogOptions options;
    options.driver.raft.id = n.id;
    for (int i = 1; i <= kNodes; ++i) options.driver.raft.voters.push_back(NodeId(i));
    options.driver.tick_ms = 10;
    options.snapshot_every_entries = 8;
    auto log = RaftMetadataLog::open(rt, kMetaDir, n, options);
    ASSERT_TRUE(log.ok()) << log.error().to_string();
    n.log = std::move(*log);
    check_image(n);  // as rebuilt from the disk
    n.log->add_listener(&n);
    n.controller = std::make_unique<Controller>(rt, *n.log);
    n.resigning = false;
    trace(fmt::format("n{} up at {}", n.id.value(), n.log->image().applied_offset().value()));
  }
  void stop(Node& n) {
    n.controller.reset();  // before the log it listens to
    n.log.reset();
  }
  void crash(Node& n) {
    world.crash(n.host, sim::CrashKind::kPowerLoss);
    stop(n);
    ++crashes;
    trace(fmt::format("n{} crash", n.id.value()));
  }
  // A graceful shutdown of the active controller: it hands the quorum on,
  // then its process stops (nothing synced is lost) and comes back later.
  void resign_and_stop(Node& n) {
    trace(fmt::format("n{} resigns", n.id.value()));
    ++resignations;
    n.resigning = true;
    n.log->resign(kResignBoundMs, [this, &n] {
      for (auto& other : nodes) {
        if (other->log && other.get() != &n && other->log->driver().node().role() == raft::Role::kLeader) {
          ++handovers;
        }
      }
      world.crash(n.host, sim::CrashKind::kProcess);
      stop(n);
      trace(fmt::format("n{} stopped after resigning", n.id.value()));
      restart_later(n);
    });
  }
  void restart_later(Node& n) {
    world.schedule(world.rng().range(50, 400) * 1'000'000, sim::kWorldHost, "restart", [this, &n] {
      if (!world.up(n.host)) {
        world.restart(n.host);
        start(n);
      }
    });
  }

  void deliver_later(const raft::Message& m) {
    Node& to = *nodes[size_t(m.to.value() - 1)];
    if (faults && world.rng().chance(0.05)) return;  // lost
    if (world.now_ms() < isolated_until_ms && (m.from == isolated || m.to == isolated)) return;  // partitioned
    int64_t delay_ns = world.rng().range(200'000, 3'000'000);
    world.schedule(delay_ns, to.host, "raft", [&to, m] {
      if (to.log) to.log->receive(m);
    });
  }

  // Every node publishes the same batch at an offset.
  void on_committed(Node& n, Offset offset, const std::vector<MetadataRecord>& records) {
    uint64_t fp = fingerprint(records);
    auto [it, inserted] = committed.emplace(offset, fp);
    if (!inserted && it->second != fp) {
      fail(fmt::format("n{} published another batch at offset {}", n.id.value(), offset.value()));
    }
    trace(fmt::format("n{} @{}", n.id.value(), offset.value()));
    check_image(n);
  }

  // No topic is half-made; every creation acknowledged at or below the
  // node's offset is there.
  void check_image(Node& n) {
    const MetadataImage& image = n.log->image();
    for (const auto& [name, topic] : image.topics()) {
      auto planned = partitions_planned.find(name);
      if (planned == partitions_planned.end()) {
        fail(fmt::format("n{} has topic {} that nobody created", n.id.value(), name));
      } else if (topic.partitions.size() != size_t(planned->second)) {
        fail(fmt::format("n{} has topic {} with {} of its {} partitions", n.id.value(), name,
                         topic.partitions.size(), planned->second));
      }
    }
    for (const auto& [name, offset] : acknowledged) {
      if (offset <= image.applied_offset() && !image.topic(name)) {
        fail(fmt::format("n{} at offset {} lacks {}, acknowledged at {}", n.id.value(),
                         image.applied_offset().value(), name, offset.value()));
      }
    }
  }

  void check_after_event() {
    for (auto& n : nodes) {
      if (!n->log) continue;
      if (n->log->driver().failed()) fail(fmt::format("n{} failed", n->id.value()));
      if (!n->log->active()) continue;
      raft::Term term = n->log->driver().node().term();
      auto [it, inserted] = active_in_term.emplace(term, n->id);
      if (!inserted && it->second != n->id) {
        fail(fmt::format("two active controllers in term {}: n{} and n{}", term.value(), it->second.value(),
                         n->id.value()));
      }
    }
  }

  Node* active() {
    for (auto& n : nodes) {
      if (n->log && n->log->active()) return n.get();
    }
    return nullptr;
  }

  void trace(const std::string& what) { trace_hash = fnv(trace_hash, fmt::format("{} {}\n", world.now_ms(), what)); }
  void fail(std::string what) {
    if (failure.empty()) failure = fmt::format("{}ms: {}", world.now_ms(), what);
  }
  void run_to(int64_t until_ms) {
    while (failure.empty() && world.now_ms() < until_ms && world.step()) check_after_event();
  }

  sim::SimWorld world;
  std::vector<std::unique_ptr<Node>> nodes;
  std::map<Offset, uint64_t> committed;              // offset -> fingerprint of the batch
  std::map<std::string, int32_t> partitions_planned;  // topic -> partitions its creation asked for
  std::map<std::string, Offset> acknowledged;         // creations answered "created"
  std::map<raft::Term, NodeId> active_in_term;
  std::map<ErrorCode, int> refusals;
  bool faults = true;
  NodeId isolated = kNoNode;  // cut off from the others until isolated_until_ms
  int64_t isolated_until_ms = 0;
  int crashes = 0;
  int resignations = 0;
  int handovers = 0;  // resignations that ended with another node leading
  int partitions = 0;
  int snapshot_restores = 0;
  uint64_t trace_hash = 14695981039346656037ULL;
  std::string failure;
};

void Node::send(const raft::Message& m) { cluster->deliver_later(m); }
void Node::on_committed(Offset offset, const std::vector<MetadataRecord>& records, uint64_t) {
  cluster->on_committed(*this, offset, records);
}
void Node::on_snapshot(Offset offset) {
  ++cluster->snapshot_restores;
  cluster->trace(fmt::format("n{} snapshot {}", id.value(), offset.value()));
  cluster->check_image(*this);
}

struct RunResult {
  std::string failure;
  uint64_t trace_hash = 0;
  size_t acknowledged = 0;
  int crashes = 0;
  int snapshot_restores = 0;
  int not_controller = 0;
  int resignations = 0;
  int handovers = 0;
};

// One run: the brokers are registered through the controller, then a topic
// creation is proposed every 25 ms at the active controller; a power loss
// every ~700 ms on a random node (down 50-400 ms); then 3 s without faults
// and 2 s without proposals.
RunResult run(uint64_t seed) {
  Cluster c(seed);
  int next_topic = 0;
  bool proposing = true;
  bool brokers_registered = false;
  std::function<void()> propose = [&] {
    if (!proposing) return;
    if (Node* n = c.active()) {
      if (!brokers_registered) {
        std::vector<MetadataRecord> brokers;
        for (int i = 1; i <= kNodes; ++i) {
          BrokerEndpoint endpoint{"PLAINTEXT", "h", uint16_t(9092 + i), 0};
          brokers.push_back(RegisterBrokerRecord{NodeId(i), BrokerEpoch(0), {}, {endpoint}, std::nullopt, false});
        }
        n->controller->submit("brokers", [brokers](const MetadataImage& view) {
          return view.brokers().empty() ? Plan(brokers) : Plan(std::vector<MetadataRecord>{});
        }, 0, [&](std::optional<ControllerError> e) { brokers_registered = brokers_registered || !e; });
      } else {
        std::string name = fmt::format("t{}", next_topic++);
        int32_t partitions = int32_t(1 + c.world.rng().uniform(4));
        c.partitions_planned[name] = partitions;
        NewTopic topic{name, partitions, 2, {}, {}};
        Node* at = n;
        n->controller->submit("create " + name, [&c, topic](const MetadataImage& view) {
          Rng rng(c.world.rng().next_u64());
          return plan_create_topic(view, topic, TopicDefaults{}, PartitionLimits{}, rng);
        }, 1000, [&c, at, name](std::optional<ControllerError> e) {
          if (e) {
            ++c.refusals[e->code];
            c.trace(fmt::format("{} refused {}", name, int(e->code)));
            return;
          }
          c.acknowledged[name] = at->log->image().applied_offset();
          c.trace(fmt::format("{} created", name));
          // Acknowledged only once committed and in the proposer's image.
          if (!at->log->image().topic(name)) c.fail(name + " acknowledged but not in the proposer's image");
        });
      }
    }
    c.world.schedule(25'000'000, sim::kWorldHost, "propose", propose);
  };
  c.world.schedule(25'000'000, sim::kWorldHost, "propose", propose);
  std::function<void()> chaos = [&] {
    if (!c.faults) return;
    Node& n = *c.nodes[c.world.rng().uniform(kNodes)];
    uint64_t dice = c.world.rng().uniform(10);
    if (dice < 2 && c.active() && !c.active()->resigning) {
      c.resign_and_stop(*c.active());
    } else if (dice < 5) {
      // The active controller (or any node) is cut off for 300-800 ms: it
      // steps down without a live majority and its changes in flight fail.
      Node* a = c.active();
      c.isolated = a ? a->id : n.id;
      c.isolated_until_ms = c.world.now_ms() + c.world.rng().range(300, 800);
      ++c.partitions;
      c.trace(fmt::format("n{} isolated", c.isolated.value()));
    } else if (c.world.up(n.host)) {
      c.crash(n);
      c.restart_later(n);
    }
    c.world.schedule(c.world.rng().range(300, 1100) * 1'000'000, sim::kWorldHost, "chaos", chaos);
  };
  c.world.schedule(500'000'000, sim::kWorldHost, "chaos", chaos);

  c.run_to(12'000);
  c.faults = false;
  c.isolated_until_ms = 0;
  for (auto& n : c.nodes) {
    if (!c.world.up(n->host)) {
      c.world.restart(n->host);
      c.start(*n);
    }
  }
  c.run_to(15'000);
  proposing = false;
  c.run_to(17'000);
  RunResult result;
  result.failure = c.failure;
  if (!result.failure.empty()) return result;

  // Healed: every acknowledged creation everywhere, and the images equal.
  for (auto& n : c.nodes) {
    for (const auto& [name, offset] : c.acknowledged) {
      if (!n->log->image().topic(name)) {
        result.failure = fmt::format("n{} lacks {} (acknowledged at offset {})", n->id.value(), name, offset.value());
        return result;
      }
    }
  }
  auto encoded = [](const MetadataImage& image) { return fingerprint(image.to_records()); };
  for (auto& n : c.nodes) {
    if (encoded(n->log->image()) != encoded(c.nodes[0]->log->image())) {
      result.failure = fmt::format("n{} and n1 hold different images", n->id.value());
      return result;
    }
  }
  std::printf("seed %llu: %d resignations (%d handed over), %d power losses, %d partitions, %zu creations "
              "acknowledged of %d proposed, %d snapshot restores, %zu active terms, refusals:",
              (unsigned long long)seed, c.resignations, c.handovers, c.crashes, c.partitions, c.acknowledged.size(),
              next_topic, c.snapshot_restores, c.active_in_term.size());
  for (const auto& [code, count] : c.refusals) std::printf(" %s x%d", protocol::error_name(code), count);
  std::printf("\n");
  result.trace_hash = c.trace_hash;
  result.acknowledged = c.acknowledged.size();
  result.crashes = c.crashes;
  result.snapshot_restores = c.snapshot_restores;
  result.not_controller = c.refusals[ErrorCode::kNotController];
  result.resignations = c.resignations;
  result.handovers = c.handovers;
  return result;
}

TEST(RaftMetadataLogSim, AcknowledgedTopicCreationsSurviveCrashesWholeOnEveryNode) {
  int crashes = 0;
  int restores = 0;
  int not_controller = 0;
  int resignations = 0;
  int handovers = 0;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    RunResult r = run(seed);
    not_controller += r.not_controller;
    resignations += r.resignations;
    handovers += r.handovers;
    ASSERT_EQ(r.failure, "") << "seed " << seed;
    EXPECT_GT(r.acknowledged, 100u) << "seed " << seed;  // progress through the faults
    crashes += r.crashes;
    restores += r.snapshot_restores;
  }
  EXPECT_GT(crashes, 20);   // the faults did happen
  EXPECT_GT(restores, 10);  // and images were rebuilt from snapshots
  EXPECT_GT(not_controller, 0);  // and leaders lost their leadership with changes in flight
  EXPECT_GT(resignations, 3);    // graceful shutdowns of the active controller
  // Most hand the quorum on before they stop (some lose theirs to a
  // message lost, or run into an isolation or another crash).
  EXPECT_GT(handovers * 2, resignations) << handovers << " of " << resignations;
}

TEST(RaftMetadataLogSim, SameSeedSameTrace) {
  RunResult a = run(7);
  RunResult b = run(7);
  ASSERT_EQ(a.failure, "");
  EXPECT_EQ(a.trace_hash, b.trace_hash);
  EXPECT_NE(a.trace_hash, run(8).trace_hash);
}

}  // namespace
}  // namespace samsa

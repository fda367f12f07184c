// A randomized property test of ReplicationCore: three brokers, each a core
// over a MemoryLog, a controller that answers AlterPartition as Kafka's
// ReplicationControlManager does and elects leaders from the ISR, and
// metadata that reaches each broker late. Random sequences of produces
// (acks 1 and -1), follower fetches, ticks, time, AlterPartition answers
// (applied, refused, lost), elections and metadata deliveries; after every
// step the checks of REPLICATION.md C2 this model can see:
//   - HW <= log end on every replica (C2.1); the core's log end is the log's;
//   - a leader's HW never decreases within its epoch (C2.2);
//   - a leader's HW covers only offsets every member of its maximal ISR
//     holds, with the same epochs (C2.1, KIP-497);
//   - every replica agrees with the committed prefix below its HW (C2.3);
//   - an up-to-date leader holds the whole committed prefix (C2.4), and an
//     acks=-1 NONE answer only covers committed offsets (C2.7/8);
//   - the controller's ISR is within the replicas, holds the leader, and
//     within the up-to-date leader's maximal ISR (C2.6, C2.12);
//   - epochs only grow (C2.10).
// A failure names its seed, step and the last events (seeds replay
// exactly: Rng). It found two holes in Kafka's rules, now closed and kept
// as unit tests: seed 51 (a same-version registration dropping a pending
// ISR expansion) and seed 254 (a leader re-elected after missed epochs
// trusting follower offsets from the older epoch). A long search:
// kSeeds = 3000, kSteps = 1500 passes in about 4 s.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/rng.h"
#include "replication/replication_core.h"
#include "replication/test_memory_log.h"

namespace samsa::replication {
namespace {

constexpr int kBrokers = 3;
constexpr int64_t kLagMs = 1000;
constexpr BrokerEpoch kBrokerEpoch{1};

std::vector<NodeId> all_brokers() {
  std::vector<NodeId> out;
  for (int b = 1; b <= kBrokers; ++b) out.push_back(NodeId(b));
  return out;
}

struct Broker {
  Broker(NodeId id, int32_t min_isr)
      : core(ReplicationConfig{id, kLagMs, min_isr}, Offset(0), Offset(0)) {}
  ReplicationCore core;
  MemoryLog log;
  PartitionEpoch applied{-1};  // the registration version it has seen
  bool paused = false;         // a stalled follower: no fetches
  std::optional<LeaderEpoch> hw_epoch;  // leader epoch of the HW last seen as leader
  Offset leader_hw{0};
};

struct InFlight {
  NodeId from;
  AlterPartitionProposal proposal;
};

class Model {
 public:
  Model(uint64_t seed) : rng_(seed) {
    min_isr_ = int32_t(rng_.range(1, 3));
    reg_.replicas = all_brokers();
    reg_.isr = all_brokers();
    reg_.leader = NodeId(1);
    reg_.leader_epoch = LeaderEpoch(0);
    reg_.partition_epoch = PartitionEpoch(0);
    for (NodeId id : all_brokers()) {
      brokers_.emplace(id, Broker(id, min_isr_));
      for (NodeId other : all_brokers()) broker(id).core.set_broker(other, BrokerStatus{kBrokerEpoch, false, false});
    }
    for (NodeId id : all_brokers()) deliver_metadata(id);
  }

  void step() {
    uint64_t what = rng_.uniform(100);
    if (what < 25) {
      produce();
    } else if (what < 60) {
      fetch(NodeId(int32_t(rng_.range(1, kBrokers))));
    } else if (what < 68) {
      now_ms_ += rng_.range(1, kLagMs);
    } else if (what < 74) {
      for (NodeId id : all_brokers()) tick(id);
    } else if (what < 84) {
      answer_alter_partition();
    } else if (what < 94) {
      deliver_metadata(NodeId(int32_t(rng_.range(1, kBrokers))));
    } else if (what < 97) {
      Broker& b = broker(NodeId(int32_t(rng_.range(1, kBrokers))));
      b.paused = !b.paused;
    } else {
      elect();
    }
    check();
  }

  std::string failure_context() const {
    std::string s = "min_isr=" + std::to_string(min_isr_) + " committed=" + std::to_string(committed_.size()) +
                    " controller leader=" + std::to_string(reg_.leader.value()) +
                    " epoch=" + std::to_string(reg_.leader_epoch.value()) + " isr=";
    for (NodeId id : reg_.isr) s += std::to_string(id.value()) + ",";
    for (const auto& [id, b] : brokers_) {
      s += " | b" + std::to_string(id.value()) + " " + to_string(b.core.role()) +
           " e=" + std::to_string(b.core.leader_epoch().value()) + " leo=" + std::to_string(b.log.end().value()) +
           " hw=" + std::to_string(b.core.high_watermark().value());
    }
    s += "\nlast events:";
    for (const std::string& e : trace_) s += "\n  " + e;
    return s;
  }

  size_t acked() const { return acked_; }
  size_t committed() const { return committed_.size(); }

 private:
  Broker& broker(NodeId id) { return brokers_.at(id); }
  void trace(std::string event) {
    if (trace_.size() == 40) trace_.erase(trace_.begin());
    trace_.push_back(std::move(event));
  }
  static std::string isr_string(const std::vector<NodeId>& isr) {
    std::string s;
    for (NodeId id : isr) s += std::to_string(id.value());
    return s;
  }

  // The broker performs its Ready (replication_core.h's order).
  void perform(NodeId id) {
    Broker& b = broker(id);
    Ready r = b.core.take_ready();
    if (r.truncate) {
      ASSERT_FALSE(r.truncate->fully);  // log start is always 0 here
      b.log.truncate(r.truncate->offset);
    }
    if (r.assign_epoch_start) b.log.assign(r.assign_epoch_start->epoch, r.assign_epoch_start->start_offset);
    observe_high_watermark(id);
    if (r.alter_partition) {
      std::vector<NodeId> isr;
      for (const IsrMember& m : r.alter_partition->new_isr) isr.push_back(m.id);
      trace("b" + std::to_string(id.value()) + " proposes " + std::to_string(r.alter_partition->id) + " isr=" +
            isr_string(isr) + " pe=" + std::to_string(r.alter_partition->partition_epoch.value()));
      inbox_.push_back({id, *r.alter_partition});
    }
    for (const ProduceCompletion& c : r.completed_produces) answered(id, c.id, c.error);
  }

  void produce() {
    NodeId id(int32_t(rng_.range(1, kBrokers)));
    Broker& b = broker(id);
    int16_t acks = rng_.chance(0.5) ? -1 : 1;
    if (b.core.check_append(acks) != ProduceError::kNone) return;
    b.log.append(b.core.leader_epoch(), int(rng_.range(1, 3)));
    b.core.on_local_append(b.log.end(), now_ms_);
    perform(id);
    if (acks == -1) {
      ProduceWaitId wait = next_wait_++;
      required_[wait] = b.log.end();
      if (std::optional<ProduceError> now = b.core.await_produce(wait, b.log.end())) answered(id, wait, *now);
    }
  }

  void answered(NodeId id, ProduceWaitId wait, ProduceError error) {
    Offset required = required_.at(wait);
    required_.erase(wait);
    if (error != ProduceError::kNone) return;
    ++acked_;
    EXPECT_LE(required, broker(id).core.high_watermark()) << "acks=-1 NONE before the HW covered the batch";
    EXPECT_LE(required.value(), int64_t(committed_.size())) << "acknowledged beyond the committed prefix";
  }

  void fetch(NodeId id) {
    Broker& f = broker(id);
    if (f.paused || f.core.role() != Role::kFollower || f.core.leader() == kNoNode) return;
    FetchPosition pos = f.core.fetch_position(f.log);
    Broker& l = broker(pos.leader);
    FollowerFetch request;
    request.replica = id;
    request.broker_epoch = rng_.chance(0.2) ? kNoBrokerEpoch : kBrokerEpoch;
    request.fetch_offset = pos.fetch_offset;
    request.log_start_offset = Offset(0);
    request.current_leader_epoch = pos.current_leader_epoch;
    request.last_fetched_epoch = pos.last_fetched_epoch;
    FetchDecision d = l.core.on_follower_fetch(request, Offset(0), l.log, now_ms_);
    perform(pos.leader);
    if (d.error == FetchError::kOffsetOutOfRange) {
      f.core.on_fetch_out_of_range(Offset(0), l.log.end());
    } else if (d.error != FetchError::kNone) {
      return;  // fenced / unknown epoch / not leader: wait for metadata
    } else if (d.diverging_epoch) {
      f.core.on_diverging_epoch(*d.diverging_epoch, f.log);  // and ignore the HW (KAFKA-14704)
    } else {
      Offset to = std::min(d.log_end_offset, pos.fetch_offset + rng_.range(0, 4));
      if (to > pos.fetch_offset) {
        f.log.copy_from(l.log, pos.fetch_offset, to);
        f.core.on_follower_append(pos.fetch_offset, to, l.log.epoch_at(to - 1));
      }
      f.core.on_leader_high_watermark(d.high_watermark);
    }
    perform(id);
  }

  void tick(NodeId id) {
    broker(id).core.tick(now_ms_);
    perform(id);
  }

  // ReplicationControlManager.alterPartition, reduced: epochs must match,
  // the ISR must be within the replicas and hold the leader.
  void answer_alter_partition() {
    if (inbox_.empty()) return;
    InFlight m = inbox_.front();
    inbox_.erase(inbox_.begin());
    Broker& l = broker(m.from);
    uint64_t fate = rng_.uniform(10);
    trace("controller gets " + std::to_string(m.proposal.id) + " from b" + std::to_string(m.from.value()) +
          " fate=" + std::to_string(fate) + " reg pe=" + std::to_string(reg_.partition_epoch.value()));
    if (fate == 0) return;  // lost
    if (m.proposal.leader_epoch != reg_.leader_epoch || m.from != reg_.leader) {
      l.core.on_alter_partition_error(m.proposal.id, AlterPartitionError::kFencedLeaderEpoch);
    } else if (m.proposal.partition_epoch != reg_.partition_epoch) {
      l.core.on_alter_partition_error(m.proposal.id, AlterPartitionError::kInvalidUpdateVersion);
    } else if (fate == 1) {
      l.core.on_alter_partition_error(m.proposal.id, AlterPartitionError::kIneligibleReplica);  // not applied
    } else {
      std::vector<NodeId> isr;
      for (const IsrMember& member : m.proposal.new_isr) isr.push_back(member.id);
      reg_.isr = isr;
      reg_.partition_epoch = reg_.partition_epoch + 1;
      if (fate != 2) {  // 2: applied, answer lost (the metadata brings it)
        l.core.on_alter_partition_result(m.proposal.id, {reg_.leader_epoch, reg_.partition_epoch, isr}, now_ms_);
      }
    }
    perform(m.from);
  }

  // An ONLINE election from the ISR (PartitionChangeBuilder); half the time
  // the old leader is fenced and leaves the ISR.
  void elect() {
    std::vector<NodeId> candidates;
    for (NodeId id : reg_.isr) {
      if (id != reg_.leader) candidates.push_back(id);
    }
    if (candidates.empty()) return;
    NodeId old_leader = reg_.leader;
    reg_.leader = candidates[rng_.uniform(candidates.size())];
    if (rng_.chance(0.5)) std::erase(reg_.isr, old_leader);
    reg_.leader_epoch = reg_.leader_epoch + 1;
    reg_.partition_epoch = reg_.partition_epoch + 1;
    trace("elect b" + std::to_string(reg_.leader.value()) + " isr=" + isr_string(reg_.isr));
  }

  void deliver_metadata(NodeId id) {
    Broker& b = broker(id);
    if (b.applied >= reg_.partition_epoch) return;
    b.core.apply(reg_, b.log, now_ms_);
    b.applied = reg_.partition_epoch;
    trace("b" + std::to_string(id.value()) + " applies pe=" + std::to_string(reg_.partition_epoch.value()) +
          " leader=b" + std::to_string(reg_.leader.value()) + " isr=" + isr_string(reg_.isr) +
          " -> core isr=" + isr_string(b.core.isr()) + " pe=" + std::to_string(b.core.partition_epoch().value()));
    perform(id);
  }

  // The committed prefix grows with every leader's HW; everything below a
  // replica's HW must match it.
  void observe_high_watermark(NodeId id) {
    Broker& b = broker(id);
    int64_t hw = b.core.high_watermark().value();
    for (int64_t o = 0; o < hw; ++o) {
      LeaderEpoch e = b.log.epoch_at(Offset(o));
      if (size_t(o) < committed_.size()) {
        ASSERT_EQ(committed_[size_t(o)], e) << "b" << id.value() << " disagrees with the committed prefix at " << o;
      } else {
        ASSERT_TRUE(b.core.is_leader()) << "a follower's HW passed the committed prefix";
        committed_.push_back(e);
      }
    }
  }

  std::vector<NodeId> maximal_isr_of(const ReplicationCore& core) const {
    std::vector<NodeId> out = core.isr();
    const auto& pending = core.pending_alter_partition();
    if (pending && pending->expand) {
      for (const IsrMember& m : pending->new_isr) {
        if (!contains(out, m.id)) out.push_back(m.id);
      }
    }
    return out;
  }

  void check() {
    for (NodeId id : reg_.isr) ASSERT_TRUE(contains(reg_.replicas, id));
    ASSERT_TRUE(contains(reg_.isr, reg_.leader)) << "the controller's leader is in its ISR";
    for (auto& [id, b] : brokers_) {
      const ReplicationCore& core = b.core;
      ASSERT_EQ(core.log_end_offset(), b.log.end()) << "core and log disagree on b" << id.value();
      ASSERT_LE(core.high_watermark(), core.log_end_offset());
      observe_high_watermark(id);
      if (!core.is_leader()) continue;
      if (b.hw_epoch == core.leader_epoch()) {
        ASSERT_GE(core.high_watermark(), b.leader_hw) << "a leader's HW went down within its epoch";
      }
      b.hw_epoch = core.leader_epoch();
      b.leader_hw = core.high_watermark();
      // The HW covers only what every maximal-ISR member holds.
      for (NodeId m : maximal_isr_of(core)) {
        const MemoryLog& log = broker(m).log;
        ASSERT_LE(core.high_watermark(), log.end())
            << "b" << id.value() << "'s HW passed maximal-ISR member b" << m.value() << "'s log end";
        for (Offset o{0}; o < core.high_watermark(); ++o) ASSERT_EQ(log.epoch_at(o), b.log.epoch_at(o));
      }
      if (core.leader_epoch() == reg_.leader_epoch) {
        ASSERT_EQ(id, reg_.leader);
        ASSERT_GE(b.log.end().value(), int64_t(committed_.size())) << "the leader lacks committed records";
        std::vector<NodeId> maximal = maximal_isr_of(core);
        for (NodeId m : reg_.isr) {
          ASSERT_TRUE(contains(maximal, m))
              << "controller ISR member b" << m.value() << " outside the leader's maximal ISR";
        }
      }
    }
    ASSERT_GE(reg_.leader_epoch, last_leader_epoch_);
    ASSERT_GE(reg_.partition_epoch, last_partition_epoch_);
    last_leader_epoch_ = reg_.leader_epoch;
    last_partition_epoch_ = reg_.partition_epoch;
  }

  Rng rng_;
  int32_t min_isr_;
  int64_t now_ms_ = 0;
  PartitionRegistration reg_;
  std::map<NodeId, Broker> brokers_;
  std::vector<InFlight> inbox_;
  std::vector<LeaderEpoch> committed_;  // the epoch of every committed offset
  std::map<ProduceWaitId, Offset> required_;
  ProduceWaitId next_wait_ = 1;
  size_t acked_ = 0;
  std::vector<std::string> trace_;  // the last events, for a failure's message
  LeaderEpoch last_leader_epoch_{0};
  PartitionEpoch last_partition_epoch_{0};
};

TEST(ReplicationProperty, RandomHistoriesKeepTheInvariants) {
  constexpr uint64_t kSeeds = 300;
  constexpr int kSteps = 800;
  size_t acked = 0, committed = 0;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    Model model(seed);
    for (int step = 0; step < kSteps; ++step) {
      model.step();
      if (::testing::Test::HasFailure()) {
        FAIL() << "seed " << seed << " step " << step << ": " << model.failure_context();
      }
    }
    acked += model.acked();
    committed += model.committed();
  }
  // The runs must do something: acknowledged writes and a growing log.
  EXPECT_GT(acked, kSeeds);
  EXPECT_GT(committed, kSeeds * 10);
  std::printf("replication property: %zu acks=-1 answers NONE, %zu committed offsets over %llu seeds\n", acked,
              committed, static_cast<unsigned long long>(kSeeds));
}

}  // namespace
}  // namespace samsa::replication

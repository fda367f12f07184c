// A cluster of three combined nodes in the simulator: three real Broker
// objects on one SimWorld, each process.roles=broker,controller with
// controller.quorum.voters naming the three on their CONTROLLER listeners,
// so the metadata log is a RaftMetadataLog over a RaftNetworkTransport on
// the simulated stream network, registration and heartbeats go through
// ClusterControlService and LifecycleDriver, and topic creations asked of a
// node that is not the active controller are forwarded to it.
//
// Checked: the quorum forms and all three brokers are registered and
// unfenced in every node's image; an RF=3 topic created through a node that
// is not the active controller is in every node's image with replicas on all
// three, the leader leads and the followers fetch from it; the active
// controller loses power, another becomes active, a new topic is created
// and reaches both survivors; the crashed node restarts and catches up. The
// same seed gives the same trace.
//
// Failover: the broker leading an RF=3 partition (min.insync.replicas=2,
// acks=-1 produces acknowledged) loses power; within its session timeout
// plus the fencing's commit another ISR member leads and the crashed one
// has left the ISR (the active controller's plan_leadership_work, in the
// fencing's batch); acks=-1 produces to the new leader are acknowledged
// (two in the ISR); the crashed node restarts, catches up and rejoins the
// ISR through AlterPartition over the network to the active controller.

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <string>

#include "base/log.h"
#include "broker/broker.h"
#include "broker/listeners.h"
#include "broker/meta_properties.h"
#include "config/broker_config.h"
#include "io/kafka_client.h"
#include "protocol/generated/produce.h"
#include "testing/broker_clients.h"
#include "testing/broker_cluster_sim.h"
#include "testing/cluster_sim.h"
#include "testing/sim_runtime.h"
#include "testing/sim_world.h"

namespace samsa::sim {
namespace {

constexpr int kNodes = 3;

// The scenarios' cluster: SimBrokerCluster (broker_cluster_sim.h) with the
// few things only these tests ask of it.
class ThreeNodes : public SimBrokerCluster {
 public:
  explicit ThreeNodes(uint64_t seed) : SimBrokerCluster(seed, kNodes) {}

  void boot(int i, bool format) {
    Status s = SimBrokerCluster::boot(i, format);
    ASSERT_TRUE(s.ok()) << s.error().to_string();
  }
  void crash(int i) { SimBrokerCluster::crash(i, CrashKind::kPowerLoss); }
  void restart(int i) {
    Status s = SimBrokerCluster::restart(i);
    ASSERT_TRUE(s.ok()) << s.error().to_string();
  }

  int active() {
    int found = SimBrokerCluster::active();
    EXPECT_NE(found, -2) << "two active controllers";
    return found;
  }

  std::optional<ControllerError> create(int i, const std::string& name, int32_t partitions) {
    return create(i, NewTopic{name, partitions, 3, {}, {}});
  }
  std::optional<ControllerError> create(int i, const NewTopic& topic) { return SimBrokerCluster::create(i, topic); }

  bool holds_replicated(int i, const std::string& name, int32_t partitions) {
    return SimBrokerCluster::holds_replicated(i, name, partitions, kNodes);
  }

  // Produces `count` one-record batches with acks=-1 to partition 0 of
  // `topic` on node i, one after the other; how many were acknowledged.
  int produce_all_acks(int i, const std::string& topic, int count) {
    if (!client_host_) client_host_ = world().add_host();
    KafkaClient producer(world().runtime(*client_host_), "producer");
    bool connected = false;
    producer.connect(address(i), kClusterBrokerPort, 3000, [&](Status) { connected = true; });
    if (!world().run_until([&] { return connected; }, 5000)) return 0;
    int acked = 0;
    for (int n = 0; n < count; ++n) {
      protocol::ProduceRequest req = produce_request(topic, 0, -1, {"record-" + std::to_string(produced_++)},
                                                    world().runtime(*client_host_).clock().wall_ms());
      bool done = false;
      producer.call<protocol::ProduceRequest, protocol::ProduceResponse>(
          req, 9, [&](Result<protocol::ProduceResponse> resp) {
            done = true;
            if (resp.ok() && resp->responses.size() == 1 && resp->responses[0].partition_responses.size() == 1 &&
                resp->responses[0].partition_responses[0].error_code == 0) {
              ++acked;
            }
          });
      if (!world().run_until([&] { return done; }, 10'000)) break;
    }
    return acked;
  }

  const PartitionState* partition0(int i, const std::string& topic) { return partition_state(i, topic, 0); }

 private:
  std::optional<HostId> client_host_;  // added when a test first produces
  int produced_ = 0;
};

bool contains(const std::vector<NodeId>& ids, NodeId id) { return std::find(ids.begin(), ids.end(), id) != ids.end(); }

constexpr int64_t kSessionTimeoutMs = 3000;  // broker.session.timeout.ms above

uint64_t leader_fails_over(uint64_t seed) {
  ThreeNodes c(seed);
  for (int i = 0; i < kNodes; ++i) c.boot(i, true);
  EXPECT_TRUE(c.world().run_until(
      [&] { return c.active() >= 0 && c.sees_unfenced(0, {1, 2, 3}) && c.sees_unfenced(1, {1, 2, 3}) &&
                   c.sees_unfenced(2, {1, 2, 3}); },
      30'000));
  int controller = c.active();
  if (controller < 0) return 0;
  // The leader is a node that is not the active controller (its fencing is
  // then the session's expiry alone, not a quorum election first), and so
  // is its successor, the next in assignment order: its ISR changes reach
  // the controller over the network.
  int leader = (controller + 1) % kNodes, third = (controller + 2) % kNodes;
  NewTopic topic{"failover", -1, -1, {{NodeId(leader + 1), NodeId(third + 1), NodeId(controller + 1)}},
                 {{"min.insync.replicas", "2"}}};
  std::optional<ControllerError> refused = c.create(controller, topic);
  EXPECT_FALSE(refused.has_value()) << refused->message;
  EXPECT_TRUE(c.world().run_until(
      [&] {
        for (int i = 0; i < kNodes; ++i) {
          const PartitionState* p = c.partition0(i, "failover");
          if (!p || p->isr.size() != 3 || !c.holds_replicated(i, "failover", 1)) return false;
        }
        return true;
      },
      15'000));
  const PartitionState* created = c.partition0(controller, "failover");
  EXPECT_TRUE(created && created->leader == NodeId(leader + 1));
  if (!created) return 0;
  EXPECT_EQ(c.produce_all_acks(leader, "failover", 20), 20);

  c.crash(leader);
  const int64_t crashed_at = c.world().now_ms();
  const NodeId gone(leader + 1);
  auto failed_over = [&](int i) {
    const PartitionState* p = c.partition0(i, "failover");
    return p && p->leader != gone && p->leader != kNoNode && !contains(p->isr, gone) && contains(p->isr, p->leader);
  };
  EXPECT_TRUE(c.world().run_until([&] { return failed_over(controller) && failed_over(third); }, 15'000))
      << "no new leader from the ISR after the leader's power loss";
  const int64_t failover_ms = c.world().now_ms() - crashed_at;
  // The session expires kSessionTimeoutMs after the last heartbeat (at most
  // broker.heartbeat.interval.ms before the crash); the fencing and the
  // election commit in one batch soon after.
  EXPECT_LE(failover_ms, kSessionTimeoutMs + 1500) << "failover took " << failover_ms << " ms";
  std::cout << "seed " << seed << ": a new leader from the ISR " << failover_ms << " ms after the power loss\n";
  const PartitionState* after = c.partition0(controller, "failover");
  if (!after || after->leader == kNoNode) return 0;
  const NodeId new_leader = after->leader;
  EXPECT_EQ(new_leader, NodeId(third + 1)) << "the first active ISR replica in assignment order leads";
  const int led_by = new_leader.value() - 1;
  EXPECT_TRUE(c.world().run_until([&] { return c.up(led_by) && c.broker(led_by).replicas().get({"failover", PartitionId(0)}) &&
                                               c.broker(led_by).replicas().get({"failover", PartitionId(0)})->is_leader(); },
                                  5'000));
  EXPECT_EQ(c.produce_all_acks(led_by, "failover", 20), 20) << "acks=-1 with two in the ISR";

  c.restart(leader);
  EXPECT_TRUE(c.world().run_until(
      [&] {
        for (int i = 0; i < kNodes; ++i) {
          const PartitionState* p = c.partition0(i, "failover");
          if (!p || p->isr.size() != 3 || p->leader != new_leader) return false;
        }
        Partition* back = c.broker(leader).replicas().get({"failover", PartitionId(0)});
        return back && back->log().log_end_offset() == Offset(40);
      },
      30'000))
      << "the restarted node did not catch up and rejoin the ISR";
  return c.world().trace_hash() ^ uint64_t(failover_ms);
}

TEST(ClusterSim, LeaderPowerLossElectsAnIsrMemberThatLeadsAndTheOldOneRejoins) {
  set_log_level(LogLevel::kWarn);
  uint64_t a = leader_fails_over(7);
  uint64_t b = leader_fails_over(7);
  EXPECT_NE(a, 0u);
  EXPECT_EQ(a, b) << "the same seed gave another trace";
  EXPECT_NE(leader_fails_over(8), 0u);
  set_log_level(LogLevel::kInfo);
}

uint64_t form_create_fail_over(uint64_t seed) {
  ThreeNodes c(seed);
  for (int i = 0; i < kNodes; ++i) c.boot(i, true);
  EXPECT_TRUE(c.world().run_until(
      [&] { return c.active() >= 0 && c.sees_unfenced(0, {1, 2, 3}) && c.sees_unfenced(1, {1, 2, 3}) &&
                   c.sees_unfenced(2, {1, 2, 3}); },
      30'000))
      << "the quorum did not form with three unfenced brokers";
  int controller = c.active();
  EXPECT_GE(controller, 0);
  if (controller < 0) return 0;
  for (int i = 0; i < kNodes; ++i) EXPECT_EQ(c.broker(i).controller_id(), NodeId(controller + 1));

  // Through a node that is not the active controller: forwarded.
  int other = (controller + 1) % kNodes;
  EXPECT_EQ(c.create(other, "rf3", 3), std::nullopt);
  EXPECT_TRUE(c.world().run_until(
      [&] { return c.holds_replicated(0, "rf3", 3) && c.holds_replicated(1, "rf3", 3) &&
                   c.holds_replicated(2, "rf3", 3); },
      15'000))
      << "rf3 is not replicated and followed on every node";

  // The active controller loses power: another becomes active and creates.
  c.crash(controller);
  EXPECT_TRUE(c.world().run_until([&] { return c.active() >= 0; }, 15'000)) << "no new active controller";
  int next = c.active();
  EXPECT_NE(next, controller);
  if (next < 0) return 0;
  EXPECT_EQ(c.create(next, "after-failover", 2), std::nullopt);
  int survivor = 3 - controller - next;
  EXPECT_TRUE(c.world().run_until(
      [&] { return c.broker(next).image().topic("after-failover") && c.broker(survivor).image().topic("after-failover"); },
      15'000));
  // The crashed node's session expires: fenced in the survivors' images.
  EXPECT_TRUE(c.world().run_until(
      [&] {
        std::set<int32_t> live{next + 1, survivor + 1};
        return c.sees_unfenced(next, live) && c.sees_unfenced(survivor, live);
      },
      15'000))
      << "the crashed node was not fenced";

  // It restarts, catches up and is unfenced again.
  c.restart(controller);
  EXPECT_TRUE(c.world().run_until(
      [&] { return c.sees_unfenced(controller, {1, 2, 3}) && c.sees_unfenced(next, {1, 2, 3}) &&
                   c.broker(controller).image().topic("after-failover"); },
      30'000))
      << "the restarted node did not rejoin";
  return c.world().trace_hash();
}

TEST(ClusterSim, ThreeCombinedNodesFormACreateAndFailOver) {
  set_log_level(LogLevel::kWarn);
  uint64_t a = form_create_fail_over(5);
  uint64_t b = form_create_fail_over(5);
  EXPECT_NE(a, 0u);
  EXPECT_EQ(a, b) << "the same seed gave another trace";
  EXPECT_NE(form_create_fail_over(6), 0u);
  set_log_level(LogLevel::kInfo);
}

// The randomized run (samsa-sim --cluster): one seed gives one trace, and
// another seed another.
TEST(ClusterSim, RandomizedRunIsDeterministic) {
  set_log_level(LogLevel::kOff);
  ClusterSimOptions o;
  o.seed = 3;
  o.duration_ms = 8000;
  ClusterSimResult a = run_cluster_sim(o);
  ClusterSimResult b = run_cluster_sim(o);
  o.seed = 4;
  ClusterSimResult c = run_cluster_sim(o);
  set_log_level(LogLevel::kInfo);
  EXPECT_TRUE(a.ok) << a.summary();
  EXPECT_GT(a.acknowledged, 0u);
  EXPECT_EQ(a.trace_hash, b.trace_hash) << "the same seed gave another trace";
  EXPECT_EQ(a.trace_lines, b.trace_lines);
  EXPECT_NE(a.trace_hash, c.trace_hash);
}

}  // namespace
}  // namespace samsa::sim

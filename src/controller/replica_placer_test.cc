// Kafka's StripedReplicaPlacer behaviour: spread, leaders balanced, racks
// respected, fenced brokers never lead, the same seed the same placement,
// and Kafka's refusals.

#include "controller/replica_placer.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace samsa {
namespace {

std::vector<UsableBroker> brokers(int n, std::vector<std::string> racks = {}) {
  std::vector<UsableBroker> out;
  for (int i = 1; i <= n; ++i) {
    UsableBroker b{NodeId(i), std::nullopt, false};
    if (!racks.empty()) b.rack = racks[size_t(i - 1) % racks.size()];
    out.push_back(b);
  }
  return out;
}

ReplicaAssignment placed(const std::vector<UsableBroker>& usable, int32_t partitions, int16_t rf, uint64_t seed) {
  Rng rng(seed);
  auto result = place_replicas(usable, partitions, rf, rng);
  EXPECT_TRUE(std::holds_alternative<ReplicaAssignment>(result)) << std::get<std::string>(result);
  return std::holds_alternative<ReplicaAssignment>(result) ? std::get<ReplicaAssignment>(result) : ReplicaAssignment{};
}

std::string refusal(const std::vector<UsableBroker>& usable, int32_t partitions, int16_t rf) {
  Rng rng(1);
  auto result = place_replicas(usable, partitions, rf, rng);
  return std::holds_alternative<std::string>(result) ? std::get<std::string>(result) : "";
}

std::optional<std::string> rack_of(const std::vector<UsableBroker>& usable, NodeId id) {
  for (const auto& b : usable) {
    if (b.id == id) return b.rack;
  }
  ADD_FAILURE() << "placed on unknown broker " << id.value();
  return std::nullopt;
}

TEST(ReplicaPlacer, EveryBrokerGetsReplicasAndLeadersAreBalanced) {
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    for (int n : {1, 2, 3, 5, 7}) {
      for (int16_t rf = 1; rf <= std::min(n, 3); ++rf) {
        for (int32_t partitions : {1, 6, 10, 31}) {
          SCOPED_TRACE(testing::Message() << "seed " << seed << " brokers " << n << " rf " << rf << " partitions "
                                          << partitions);
          auto usable = brokers(n);
          ReplicaAssignment a = placed(usable, partitions, rf, seed);
          ASSERT_EQ(a.size(), size_t(partitions));
          std::map<NodeId, int> leaders, replicas;
          for (const auto& r : a) {
            ASSERT_EQ(r.size(), size_t(rf));
            EXPECT_EQ(std::set<NodeId>(r.begin(), r.end()).size(), r.size()) << "a broker twice in one partition";
            leaders[r.front()]++;
            for (NodeId id : r) replicas[id]++;
          }
          int most = 0, fewest = partitions;
          for (const auto& b : usable) {
            most = std::max(most, leaders[b.id]);
            fewest = std::min(fewest, leaders[b.id]);
          }
          EXPECT_LE(most - fewest, 1) << "leaders unbalanced";
          if (partitions * rf >= n) {
            EXPECT_EQ(replicas.size(), size_t(n)) << "a broker got no replica";
          }
        }
      }
    }
  }
}

TEST(ReplicaPlacer, ReplicasAreOnDifferentRacksWhileRacksRemain) {
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    for (const auto& racks : {std::vector<std::string>{"a", "b", "c"}, std::vector<std::string>{"a", "b"},
                              std::vector<std::string>{"a", "a", "b"}}) {
      auto usable = brokers(6, racks);
      std::set<std::string> distinct(racks.begin(), racks.end());
      for (int16_t rf = 1; rf <= 4; ++rf) {
        SCOPED_TRACE(testing::Message() << "seed " << seed << " racks " << distinct.size() << " rf " << rf);
        for (const auto& r : placed(usable, 12, rf, seed)) {
          std::set<std::optional<std::string>> used;
          for (NodeId id : r) used.insert(rack_of(usable, id));
          EXPECT_EQ(used.size(), std::min(size_t(rf), distinct.size()));
        }
      }
    }
  }
  // Racks of equal size: leaders balanced over the brokers as without racks.
  auto usable = brokers(6, {"a", "b", "c"});
  std::map<NodeId, int> leaders;
  for (const auto& r : placed(usable, 60, 3, 7)) leaders[r.front()]++;
  for (const auto& b : usable) EXPECT_EQ(leaders[b.id], 10);
}

TEST(ReplicaPlacer, FencedBrokersNeverLeadAndFillInLast) {
  auto usable = brokers(4);
  usable[0].fenced = true;  // broker 1
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    int fenced_followers = 0;
    for (const auto& r : placed(usable, 20, 3, seed)) {
      EXPECT_NE(r.front(), NodeId(1));
      for (size_t i = 1; i < r.size(); ++i) fenced_followers += r[i] == NodeId(1);
    }
    EXPECT_EQ(fenced_followers, 0) << "three unfenced brokers were enough";
    for (const auto& r : placed(usable, 20, 4, seed)) {
      EXPECT_NE(r.front(), NodeId(1));
      EXPECT_EQ(r.back(), NodeId(1)) << "a fenced broker only once the unfenced ones ran out";
    }
  }
}

TEST(ReplicaPlacer, TheSameSeedPlacesTheSameAndSeedsDiffer) {
  auto usable = brokers(5, {"a", "b"});
  EXPECT_EQ(placed(usable, 20, 3, 42), placed(usable, 20, 3, 42));
  std::set<ReplicaAssignment> seen;
  for (uint64_t seed = 1; seed <= 20; ++seed) seen.insert(placed(usable, 20, 3, seed));
  EXPECT_GT(seen.size(), 10u) << "the start is random";
}

TEST(ReplicaPlacer, KafkasRefusals) {
  EXPECT_EQ(refusal(brokers(3), 1, 0), "Invalid replication factor 0: the replication factor must be positive.");
  EXPECT_EQ(refusal(brokers(3), 1, -2), "Invalid replication factor -2: the replication factor must be positive.");
  EXPECT_EQ(refusal(brokers(1), 1, 3),
            "The target replication factor of 3 cannot be reached because only 1 broker(s) are registered.");
  EXPECT_EQ(refusal({}, 1, 1), "All brokers are currently fenced.");
  auto fenced = brokers(2);
  for (auto& b : fenced) b.fenced = true;
  EXPECT_EQ(refusal(fenced, 1, 1), "All brokers are currently fenced.");
}

}  // namespace
}  // namespace samsa

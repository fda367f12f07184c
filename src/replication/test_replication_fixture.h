#pragma once
// A leader ReplicationCore with followers 2 and 3, for the core's unit
// tests: broker 1 leads epoch 5 (partition epoch 7) of replicas {1,2,3};
// every broker registered with broker epoch 10. Test-only.

#include <gtest/gtest.h>

#include <vector>

#include "replication/replication_core.h"
#include "replication/test_memory_log.h"

namespace samsa::replication::testing {

inline constexpr NodeId kLeader{1};
inline constexpr NodeId kF2{2};
inline constexpr NodeId kF3{3};
inline constexpr LeaderEpoch kEpoch{5};
inline constexpr PartitionEpoch kPartitionEpoch{7};
inline constexpr BrokerEpoch kBrokerEpoch{10};
inline constexpr int64_t kLagMs = 30000;

inline std::vector<NodeId> ids(std::initializer_list<int> v) {
  std::vector<NodeId> out;
  for (int i : v) out.push_back(NodeId(i));
  return out;
}

inline PartitionRegistration registration(NodeId leader, LeaderEpoch epoch, PartitionEpoch partition_epoch,
                                          std::vector<NodeId> replicas, std::vector<NodeId> isr) {
  return {std::move(replicas), std::move(isr), leader, epoch, partition_epoch};
}

class LeaderTest : public ::testing::Test {
 protected:
  explicit LeaderTest(std::vector<NodeId> isr = ids({1, 2, 3}), int32_t min_isr = 1)
      : core_(config(min_isr), Offset(0), Offset(0)) {
    for (int b = 1; b <= 3; ++b) core_.set_broker(NodeId(b), BrokerStatus{kBrokerEpoch, false, false});
    core_.become_leader(registration(kLeader, kEpoch, kPartitionEpoch, ids({1, 2, 3}), std::move(isr)), now_);
    log_.assign(kEpoch, Offset(0));
    core_.take_ready();
  }

  static ReplicationConfig config(int32_t min_isr) {
    ReplicationConfig c;
    c.self = kLeader;
    c.replica_lag_time_max_ms = kLagMs;
    c.min_insync_replicas = min_isr;
    return c;
  }

  void append(int n) {
    log_.append(kEpoch, n);
    core_.on_local_append(log_.end(), now_);
  }

  FollowerFetch fetch_of(NodeId id, int64_t offset) const {
    FollowerFetch f;
    f.replica = id;
    f.broker_epoch = kBrokerEpoch;
    f.fetch_offset = Offset(offset);
    f.log_start_offset = Offset(0);
    f.current_leader_epoch = kEpoch;
    return f;
  }

  FetchDecision fetch(NodeId id, int64_t offset) {
    return core_.on_follower_fetch(fetch_of(id, offset), Offset(0), log_, now_);
  }

  void advance(int64_t ms) { now_ += ms; }
  Offset hw() const { return core_.high_watermark(); }

  int64_t now_ = 1000;
  MemoryLog log_;
  ReplicationCore core_;
};

}  // namespace samsa::replication::testing

#pragma once
// LeaderBalancer: auto.leader.rebalance.enable on the active controller.
// Every leader.imbalance.check.interval.seconds it asks
// partitions_to_rebalance (controller/leader_rebalance.h) which partitions
// should go back to their preferred replica and proposes those preferred
// elections, as Kafka's QuorumController balances partition leaders. Only
// while this node is the active controller and nothing else of its is in
// flight (a rebalance is never urgent).
//
// Loop-thread only; the runtime and the controller outlive it.

#include <functional>
#include <memory>

#include "controller/leader_election.h"
#include "controller/quorum_controller.h"
#include "io/runtime.h"

namespace samsa {

struct LeaderBalancerConfig {
  bool enabled = true;
  int64_t check_interval_ms = 300'000;
  int imbalance_percentage = 10;
  std::function<ElectionPolicy()> election_policy;  // read at each rebalance
};

class LeaderBalancer {
 public:
  LeaderBalancer(Runtime& runtime, Controller& controller, LeaderBalancerConfig config);
  ~LeaderBalancer();
  LeaderBalancer(const LeaderBalancer&) = delete;
  LeaderBalancer& operator=(const LeaderBalancer&) = delete;

 private:
  void schedule();
  void check();

  Runtime& runtime_;
  Controller& controller_;
  LeaderBalancerConfig config_;
  TimerId timer_ = 0;
  bool proposing_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // for answers that come after it is gone
};

}  // namespace samsa

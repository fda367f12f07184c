#include "controller/leader_balancer.h"

#include <memory>

#include "base/log.h"
#include "controller/leader_rebalance.h"

namespace samsa {

LeaderBalancer::LeaderBalancer(Runtime& runtime, Controller& controller, LeaderBalancerConfig config)
    : runtime_(runtime), controller_(controller), config_(config) {
  if (config_.enabled) schedule();
}

LeaderBalancer::~LeaderBalancer() {
  if (timer_) runtime_.cancel_timer(timer_);
}

void LeaderBalancer::schedule() {
  timer_ = runtime_.add_timer(config_.check_interval_ms, [this] {
    timer_ = 0;
    check();
    schedule();
  });
}

void LeaderBalancer::check() {
  if (proposing_ || !controller_.active() || controller_.in_flight() > 0) return;
  std::vector<ElectionRequestTopic> chosen = partitions_to_rebalance(controller_.view(), config_.imbalance_percentage);
  if (chosen.empty()) return;
  size_t count = 0;
  for (const auto& t : chosen) count += t.partitions.size();
  LOG_INFO("controller", "leadership imbalance: electing the preferred leader of {} partitions", count);
  proposing_ = true;
  ElectionPolicy policy = config_.election_policy ? config_.election_policy() : ElectionPolicy{};
  PlanFn plan = [chosen, policy](const MetadataImage& view) -> Plan {
    return plan_elections(view, ElectionType::kPreferred, chosen, policy).records;
  };
  controller_.submit("preferred leader rebalance", plan, config_.check_interval_ms,
                     [this, alive = std::weak_ptr<bool>(alive_)](std::optional<ControllerError> e) {
                       if (alive.expired()) return;
                       proposing_ = false;
                       if (e) LOG_INFO("controller", "preferred leader rebalance not done: {}", e->message);
                     });
}

}  // namespace samsa

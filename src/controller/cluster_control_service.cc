#include "controller/cluster_control_service.h"

#include <algorithm>

#include "base/log.h"
#include "controller/cluster_control_wire.h"
#include "controller/leader_election.h"

namespace samsa {
namespace {

LifecycleError not_controller() {
  return LifecycleError{protocol::ErrorCode::kNotController, "This node is not the active controller."};
}

LifecycleError from_controller(const ControllerError& e) { return LifecycleError{e.code, e.message}; }

}  // namespace

ClusterControlService::ClusterControlService(Runtime& runtime, MetadataLog& log, Controller& controller,
                                             std::function<Offset()> next_offset, ClusterControlConfig config,
                                             std::function<ElectionPolicy()> election_policy)
    : runtime_(runtime), log_(log), controller_(controller), next_offset_(std::move(next_offset)),
      control_(std::move(config)), election_policy_(std::move(election_policy)) {
  log_.add_listener(this);
  // The log applied its snapshot and committed entries (RaftMetadataLog::
  // open) before this listener existed, so replay() never saw the
  // registrations in them: without a catch-up target a broker registered
  // before this process started could never be unfenced by it (chaos seed
  // 1004: brokers 1 and 3 fenced by a restarted controller stayed fenced
  // for the rest of the run). For the targets the loaded image is a
  // snapshot at its applied offset, as Kafka replays a loaded snapshot.
  control_.replay_snapshot(log_.image(), log_.image().applied_offset());
  follow_activity();
  schedule_check();
}

ClusterControlService::~ClusterControlService() {
  *alive_ = false;
  if (timer_) runtime_.cancel_timer(timer_);
  log_.remove_listener(this);
}

bool ClusterControlService::follow_activity() {
  bool active = controller_.active();
  if (active && !control_.active()) {
    control_.activate(now_ms(), log_.image());
    LOG_INFO("controller", "active controller: broker sessions start now for {} registered brokers",
             log_.image().brokers().size());
  } else if (!active && control_.active()) {
    control_.deactivate();
    LOG_INFO("controller", "no longer the active controller: broker sessions dropped");
  }
  return active;
}

void ClusterControlService::schedule_check() {
  int64_t delay = kCheckIntervalMs;
  if (control_.active()) delay = std::clamp(control_.next_check_ms() - now_ms(), int64_t(1), kCheckIntervalMs);
  timer_ = runtime_.add_timer(delay, [this] {
    timer_ = 0;
    check();
    schedule_check();
  });
}

// Fences the brokers whose sessions expired, one proposal each.
void ClusterControlService::check() {
  if (!follow_activity()) return;
  while (control_.next_check_ms() <= now_ms()) {
    std::optional<FencingDecision> fencing = control_.fence_stale_broker(now_ms(), controller_.view());
    if (!fencing) return;
    LOG_INFO("controller", "fencing broker {}: no heartbeat within broker.session.timeout.ms",
             fencing->work.broker.value());
    std::string what = "the fencing of broker " + std::to_string(fencing->work.broker.value());
    propose(std::move(what), std::move(fencing->records), std::move(fencing->work),
            [](std::optional<ControllerError>) {});
    if (!control_.active()) return;  // the proposal failed at once
  }
}

void ClusterControlService::propose(std::string what, std::vector<MetadataRecord> records, LeadershipWork work,
                                    ControllerDone done) {
  if (records.empty() && work.empty()) return done(std::nullopt);
  ElectionPolicy policy = election_policy_ ? election_policy_() : ElectionPolicy{};
  auto plan = [records = std::move(records), work = std::move(work), policy](const MetadataImage& view) {
    std::vector<MetadataRecord> changes = plan_leadership_work(view, records, work, policy);
    if (changes.empty()) return Plan(records);
    // Kafka's order: a departing broker's partitions change before its
    // fencing / shutdown record, an arriving one's after its unfencing.
    const bool arriving = !work.leaderless.empty();
    std::vector<MetadataRecord> batch = arriving ? records : changes;
    const std::vector<MetadataRecord>& rest = arriving ? changes : records;
    batch.insert(batch.end(), rest.begin(), rest.end());
    return Plan(std::move(batch));
  };
  controller_.submit(
      std::move(what), plan, 0,
      [this, alive = alive_, done = std::move(done)](std::optional<ControllerError> failed) {
        // A failed proposal: the controller reverted to the committed
        // image; the sessions planned on top of it go too.
        if (failed && *alive && control_.active()) control_.deactivate();
        done(std::move(failed));
      });
}

void ClusterControlService::broker_registration(const protocol::BrokerRegistrationRequest& request,
                                                std::function<void(protocol::BrokerRegistrationResponse)> done) {
  if (!follow_activity()) return done(registration_response(not_controller()));
  auto decided = control_.register_broker(now_ms(), controller_.view(), registration_from_wire(request),
                                          next_offset_());
  if (auto* refused = std::get_if<LifecycleError>(&decided)) {
    LOG_WARN("controller", "refused the registration of broker {}: {}", request.broker_id, refused->message);
    return done(registration_response(*refused));
  }
  auto& decision = std::get<RegistrationDecision>(decided);
  BrokerEpoch epoch = decision.epoch;
  int32_t id = request.broker_id;
  propose("the registration of broker " + std::to_string(id), std::move(decision.records), std::move(decision.work),
          [epoch, id, done = std::move(done)](std::optional<ControllerError> failed) {
            if (failed) return done(registration_response(from_controller(*failed)));
            LOG_INFO("controller", "registered broker {} with epoch {}", id, epoch.value());
            done(registration_response(epoch));
          });
}

void ClusterControlService::broker_heartbeat(const protocol::BrokerHeartbeatRequest& request,
                                             std::function<void(protocol::BrokerHeartbeatResponse)> done) {
  if (!follow_activity()) return done(heartbeat_response(not_controller()));
  auto decided = control_.heartbeat(now_ms(), controller_.view(), heartbeat_from_wire(request), next_offset_());
  if (auto* refused = std::get_if<LifecycleError>(&decided)) return done(heartbeat_response(*refused));
  auto& decision = std::get<HeartbeatDecision>(decided);
  protocol::BrokerHeartbeatResponse answer = heartbeat_response(decision);
  std::string what = "the heartbeat of broker " + std::to_string(request.broker_id);
  if (!decision.records.empty()) {
    LOG_INFO("controller", "broker {} changes state: {}", request.broker_id,
             decision.should_shut_down         ? "shutting down"
             : decision.in_controlled_shutdown ? "in controlled shutdown"
             : decision.is_fenced              ? "fenced"
                                               : "unfenced");
  }
  propose(std::move(what), std::move(decision.records), std::move(decision.work),
          [answer, done = std::move(done)](std::optional<ControllerError> failed) {
            if (failed) return done(heartbeat_response(from_controller(*failed)));
            done(answer);
          });
}

void ClusterControlService::unregister_broker(NodeId broker,
                                              std::function<void(protocol::UnregisterBrokerResponse)> done) {
  if (!follow_activity()) {
    LifecycleError refused = not_controller();
    return done(unregister_response(&refused));
  }
  const std::string id = std::to_string(broker.value());
  if (control_.is_eligible_leader(controller_.view(), broker)) {
    LifecycleError refused{protocol::ErrorCode::kInvalidRequest,
                           "Broker " + id + " is active (registered and unfenced): shut it down before "
                           "unregistering it."};
    return done(unregister_response(&refused));
  }
  auto decided = control_.unregister_broker(controller_.view(), broker);
  if (auto* refused = std::get_if<LifecycleError>(&decided)) return done(unregister_response(refused));
  auto& decision = std::get<FencingDecision>(decided);
  propose("the unregistration of broker " + id, std::move(decision.records), std::move(decision.work),
          [id, done = std::move(done)](std::optional<ControllerError> failed) {
            if (failed) {
              LifecycleError error = from_controller(*failed);
              return done(unregister_response(&error));
            }
            LOG_INFO("controller", "unregistered broker {}", id);
            done(unregister_response(nullptr));
          });
}

void ClusterControlService::on_committed(Offset offset, const std::vector<MetadataRecord>& records, uint64_t) {
  for (const MetadataRecord& record : records) control_.replay(record, offset);
}

void ClusterControlService::on_snapshot(Offset offset) { control_.replay_snapshot(log_.image(), offset); }

}  // namespace samsa

#pragma once
// ClusterControlService: ClusterControl (the pure registration, heartbeat
// and fencing core) wired to the asynchronous Controller on a node of a
// controller quorum, as Kafka's QuorumController drives its
// ClusterControlManager:
//   - it follows the controller's activity: activate() when this node
//     becomes the active controller (checked on every request and on a
//     timer), deactivate() when it stops, or when a proposal failed (the
//     controller reverts to the committed state, and so do the sessions);
//   - replay() / replay_snapshot() from its metadata-log listener, and
//     replay_snapshot() once at construction for what the log loaded before
//     (a restarted node's registrations: every broker's catch-up target);
//   - BrokerRegistration / BrokerHeartbeat (from the controller listener,
//     ControllerApis) are planned against the controller's view, their
//     records proposed, answered when committed; NOT_CONTROLLER from a node
//     that is not the active controller;
//   - UnregisterBroker (64, from the broker listener: an administrator's
//     request) of a broker that is fenced or shut down: an
//     UnregisterBrokerRecord with the partition changes it calls for;
//   - a timer at ClusterControl::next_check_ms() fences a broker whose
//     session expired (one at a time, as Kafka);
//   - every decision's LeadershipWork (a broker fenced, in controlled
//     shutdown, re-registered as a new incarnation, or unfenced) becomes
//     elections and ISR changes (plan_leadership_work) proposed in the same
//     batch as the decision's broker record, as Kafka's
//     ReplicationControlManager.handleBrokerFenced / handleBrokerUnfenced /
//     handleBrokerInControlledShutdown do: a departing broker's partition
//     changes come first, an arriving broker's after its record.
// The broker epoch of a new registration is the offset the proposed batch
// lands at (`next_offset`, the Raft index of the next entry).
//
// Loop-thread only. The Runtime, log and controller outlive it.

#include <functional>
#include <memory>

#include "controller/cluster_control.h"
#include "controller/controller_apis.h"
#include "controller/leader_election.h"
#include "controller/quorum_controller.h"
#include "protocol/generated/unregister_broker.h"
#include "io/runtime.h"

namespace samsa {

class ClusterControlService final : public BrokerLifecycleApis, private MetadataListener {
 public:
  // How often the activity is checked when nothing else happens (a node
  // that became active activates its sessions within this).
  static constexpr int64_t kCheckIntervalMs = 100;

  // election_policy: the broker's election settings (a topic's own
  // settings win), read at every election.
  ClusterControlService(Runtime& runtime, MetadataLog& log, Controller& controller,
                        std::function<Offset()> next_offset, ClusterControlConfig config,
                        std::function<ElectionPolicy()> election_policy);
  ~ClusterControlService() override;
  ClusterControlService(const ClusterControlService&) = delete;
  ClusterControlService& operator=(const ClusterControlService&) = delete;

  void broker_registration(const protocol::BrokerRegistrationRequest& request,
                           std::function<void(protocol::BrokerRegistrationResponse)> done) override;
  void broker_heartbeat(const protocol::BrokerHeartbeatRequest& request,
                        std::function<void(protocol::BrokerHeartbeatResponse)> done) override;

  // Refuses an active broker (registered, unfenced, not shutting down):
  // Kafka's controller accepts it, and the live broker registers again at
  // its next heartbeat, which is never what an administrator meant.
  void unregister_broker(NodeId broker, std::function<void(protocol::UnregisterBrokerResponse)> done);

  const ClusterControl& control() const { return control_; }

 private:
  void on_committed(Offset offset, const std::vector<MetadataRecord>& records, uint64_t tag) override;
  void on_snapshot(Offset offset) override;
  // Activates or deactivates the sessions as the controller now is; true
  // when active.
  bool follow_activity();
  void schedule_check();
  void check();
  // Proposes a decision's records with the elections and ISR changes its
  // work calls for (planned against the view the batch lands on); `done`
  // with nullopt once committed.
  void propose(std::string what, std::vector<MetadataRecord> records, LeadershipWork work, ControllerDone done);
  int64_t now_ms() const { return runtime_.clock().monotonic_ms(); }

  Runtime& runtime_;
  MetadataLog& log_;
  Controller& controller_;
  std::function<Offset()> next_offset_;
  ClusterControl control_;
  std::function<ElectionPolicy()> election_policy_;
  TimerId timer_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace samsa

#pragma once
// BrokerLifecycle: a broker's side of KIP-631, as Kafka's
// BrokerLifecycleManager: register with the active controller, heartbeat,
// get unfenced once caught up, shut down in a controlled way. Pure: the
// driver (the broker's wiring) calls poll() when next_send_ms() is due,
// sends what it returns to the active controller, and reports the answer
// or the failure; time is the explicit now_ms of every call, the jitter of
// the retry backoff comes from the injected Rng.
//
// States (docs/cluster.md):
//   STARTING -> REGISTERING (start)           registration sent until accepted
//   REGISTERING -> RECOVERY (epoch received)  fenced: catching up with the metadata log
//   RECOVERY -> RUNNING (IsFenced=false)      unfenced once caught up and ready
//   RUNNING -> RECOVERY (IsFenced=true)       the controller fenced it meanwhile
//   RUNNING -> PENDING_CONTROLLED_SHUTDOWN    begin_controlled_shutdown (SIGTERM)
//   PENDING_CONTROLLED_SHUTDOWN -> SHUTTING_DOWN (ShouldShutDown=true)
//   any other state -> SHUTTING_DOWN          begin_controlled_shutdown: nothing to hand over
//   RECOVERY/RUNNING -> REGISTERING           STALE_BROKER_EPOCH: the controller no longer
//                                             knows this epoch (unregistered, re-registered)
//
// Self-fencing: the controller fences a broker broker.session.timeout.ms
// after it last heard from it. The broker counts its lease from the time
// it *sent* its last heartbeat that was answered without error, which is
// no later than when the controller heard it, so its own lease ends no
// later than the controller's: may_lead() is false from then on, before
// another broker can be elected in its place (given clocks that run at the
// same rate).
//
// At most one request is in flight. Loop-thread only.

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "base/rng.h"
#include "config/broker_config.h"
#include "controller/metadata_records.h"
#include "protocol/error_code.h"
#include "protocol/generated/broker_heartbeat.h"
#include "protocol/generated/broker_registration.h"

namespace samsa {

enum class BrokerLifecycleState {
  kStarting,
  kRegistering,
  kRecovery,
  kRunning,
  kPendingControlledShutdown,
  kShuttingDown,
};
const char* lifecycle_state_name(BrokerLifecycleState state);  // Kafka's BrokerState names

struct BrokerLifecycleConfig {
  NodeId node_id;
  std::string cluster_id;
  Uuid incarnation_id;  // new for every process start
  std::vector<BrokerEndpoint> listeners;
  std::optional<std::string> rack;
  // KIP-966: the epoch of the incarnation that shut down cleanly before this
  // one (the clean-shutdown markers hold it); kNoBrokerEpoch after a crash.
  BrokerEpoch previous_broker_epoch = kNoBrokerEpoch;
  int64_t heartbeat_interval_ms = 2000;  // broker.heartbeat.interval.ms
  int64_t session_timeout_ms = 9000;     // broker.session.timeout.ms
};

using LifecycleRequest = std::variant<protocol::BrokerRegistrationRequest, protocol::BrokerHeartbeatRequest>;

class BrokerLifecycle {
 public:
  // Kafka's retry backoff: 100 ms doubling up to the session timeout, 2% jitter.
  static constexpr int64_t kInitialBackoffMs = 100;
  // Kafka's pace right after a first answer that still needs work: a
  // quicker start (not caught up yet) or shutdown (pending).
  static constexpr int64_t kCatchUpPollMs = 10;
  static constexpr int64_t kFirstShutdownPollMs = 50;

  BrokerLifecycle(BrokerLifecycleConfig config, Rng& rng);

  void start(int64_t now_ms);
  // The request to send now, if one is due (none while one is in flight).
  // metadata_offset: the highest metadata offset this broker has replayed.
  std::optional<LifecycleRequest> poll(int64_t now_ms, Offset metadata_offset);
  // When poll() will have something (INT64_MAX: waiting for an answer, or done).
  int64_t next_send_ms() const;

  void on_registration_response(int64_t now_ms, const protocol::BrokerRegistrationResponse& response);
  void on_heartbeat_response(int64_t now_ms, const protocol::BrokerHeartbeatResponse& response);
  // The request got no answer (timeout, connection lost, no controller).
  void on_request_failed(int64_t now_ms);

  // The broker's logs are loaded: it asks to be unfenced (WantFence=false).
  void set_ready_to_unfence(int64_t now_ms);
  void begin_controlled_shutdown(int64_t now_ms);

  BrokerLifecycleState state() const { return state_; }
  BrokerEpoch broker_epoch() const { return epoch_; }
  // The controller said it has replayed its own registration.
  bool caught_up() const { return caught_up_; }
  // Whether this broker may act as a partition leader now: unfenced and
  // within its lease.
  bool may_lead(int64_t now_ms) const;
  // When may_lead() turns false unless a heartbeat is answered first
  // (nullopt: never answered).
  std::optional<int64_t> lease_end_ms() const { return lease_end_ms_; }
  // The error of the last answer that carried one (NONE after a success):
  // for the driver to log (e.g. INCONSISTENT_CLUSTER_ID).
  protocol::ErrorCode last_error() const { return last_error_; }
  int64_t failed_attempts() const { return failed_attempts_; }

 private:
  protocol::BrokerRegistrationRequest registration_request() const;
  protocol::BrokerHeartbeatRequest heartbeat_request(Offset metadata_offset) const;
  void after_heartbeat_ok(int64_t now_ms, const protocol::BrokerHeartbeatResponse& response);
  void schedule(int64_t now_ms, int64_t delay_ms);
  void schedule_after_failure(int64_t now_ms);
  int64_t backoff_ms();
  void shut_down();

  BrokerLifecycleConfig config_;
  Rng& rng_;
  BrokerLifecycleState state_ = BrokerLifecycleState::kStarting;
  BrokerEpoch epoch_ = kNoBrokerEpoch;
  bool registered_ = false;
  bool ready_to_unfence_ = false;
  bool caught_up_ = false;
  bool in_flight_ = false;
  bool next_immediate_ = false;  // asked for while a request was in flight
  bool got_shutdown_answer_ = false;
  int64_t next_send_ms_;
  int64_t last_send_ms_ = 0;
  std::optional<int64_t> lease_end_ms_;
  int64_t failed_attempts_ = 0;
  protocol::ErrorCode last_error_ = protocol::ErrorCode::kNone;
};

// The broker's advertised listeners as it registers them (Kafka's
// SecurityProtocol ids). The first is the one clients are told about.
std::vector<BrokerEndpoint> advertised_endpoints(const BrokerConfig& config);

}  // namespace samsa

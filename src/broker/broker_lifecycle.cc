#include "broker/broker_lifecycle.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/assert.h"

namespace samsa {
namespace {

using protocol::ErrorCode;
using State = BrokerLifecycleState;

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

// Kafka's SecurityProtocol ids.
int16_t security_protocol_id(const std::string& name) {
  if (name == "SSL") return 1;
  if (name == "SASL_PLAINTEXT") return 2;
  if (name == "SASL_SSL") return 3;
  return 0;  // PLAINTEXT
}

}  // namespace

const char* lifecycle_state_name(BrokerLifecycleState state) {
  switch (state) {
    case State::kStarting: return "STARTING";
    case State::kRegistering: return "REGISTERING";
    case State::kRecovery: return "RECOVERY";
    case State::kRunning: return "RUNNING";
    case State::kPendingControlledShutdown: return "PENDING_CONTROLLED_SHUTDOWN";
    case State::kShuttingDown: return "SHUTTING_DOWN";
  }
  return "UNKNOWN";
}

std::vector<BrokerEndpoint> advertised_endpoints(const BrokerConfig& config) {
  std::vector<BrokerEndpoint> endpoints;
  for (const ListenerConfig& l : config.advertised_listeners) {
    endpoints.push_back(BrokerEndpoint{l.endpoint.name, l.endpoint.host, uint16_t(l.endpoint.port),
                                       security_protocol_id(l.security_protocol)});
  }
  return endpoints;
}

BrokerLifecycle::BrokerLifecycle(BrokerLifecycleConfig config, Rng& rng)
    : config_(std::move(config)), rng_(rng), next_send_ms_(kNever) {
  ASSERT(config_.heartbeat_interval_ms > 0 && config_.session_timeout_ms > 0);
}

void BrokerLifecycle::start(int64_t now_ms) {
  ASSERT_MSG(state_ == State::kStarting, "a broker lifecycle starts once");
  state_ = State::kRegistering;
  schedule(now_ms, 0);
}

int64_t BrokerLifecycle::next_send_ms() const {
  if (in_flight_ || state_ == State::kStarting || state_ == State::kShuttingDown) return kNever;
  return next_send_ms_;
}

std::optional<LifecycleRequest> BrokerLifecycle::poll(int64_t now_ms, Offset metadata_offset) {
  if (now_ms < next_send_ms()) return std::nullopt;
  in_flight_ = true;
  last_send_ms_ = now_ms;
  if (!registered_) return LifecycleRequest(registration_request());
  return LifecycleRequest(heartbeat_request(metadata_offset));
}

protocol::BrokerRegistrationRequest BrokerLifecycle::registration_request() const {
  protocol::BrokerRegistrationRequest r;
  r.broker_id = config_.node_id.value();
  r.cluster_id = config_.cluster_id;
  r.incarnation_id = config_.incarnation_id;
  for (const BrokerEndpoint& e : config_.listeners) r.listeners.push_back({e.name, e.host, e.port, e.security_protocol});
  r.rack = config_.rack;
  r.previous_broker_epoch = config_.previous_broker_epoch.value();
  return r;
}

protocol::BrokerHeartbeatRequest BrokerLifecycle::heartbeat_request(Offset metadata_offset) const {
  protocol::BrokerHeartbeatRequest r;
  r.broker_id = config_.node_id.value();
  r.broker_epoch = epoch_.value();
  r.current_metadata_offset = metadata_offset.value();
  r.want_fence = !ready_to_unfence_;
  r.want_shut_down = state_ == State::kPendingControlledShutdown;
  return r;
}

void BrokerLifecycle::on_registration_response(int64_t now_ms, const protocol::BrokerRegistrationResponse& response) {
  ASSERT_MSG(in_flight_ && !registered_, "a registration answer without a registration in flight");
  in_flight_ = false;
  if (state_ == State::kShuttingDown) return;
  last_error_ = ErrorCode(response.error_code);
  if (last_error_ != ErrorCode::kNone) {
    schedule_after_failure(now_ms);
    return;
  }
  // Epochs only grow: a new registration of this process never goes back.
  ASSERT_MSG(epoch_ == kNoBrokerEpoch || BrokerEpoch(response.broker_epoch) >= epoch_, "broker epoch went back");
  epoch_ = BrokerEpoch(response.broker_epoch);
  registered_ = true;
  failed_attempts_ = 0;
  caught_up_ = false;
  state_ = State::kRecovery;
  schedule(now_ms, 0);  // the first heartbeat at once
}

void BrokerLifecycle::on_heartbeat_response(int64_t now_ms, const protocol::BrokerHeartbeatResponse& response) {
  ASSERT_MSG(in_flight_ && registered_, "a heartbeat answer without a heartbeat in flight");
  in_flight_ = false;
  if (state_ == State::kShuttingDown) return;
  last_error_ = ErrorCode(response.error_code);
  if (last_error_ == ErrorCode::kNone) {
    after_heartbeat_ok(now_ms, response);
    return;
  }
  if (last_error_ == ErrorCode::kStaleBrokerEpoch) {
    // The controller no longer knows this epoch: this broker is not a
    // member until it registers again. Leaderships it held are gone with
    // the epoch; a pending shutdown has nothing left to hand over.
    lease_end_ms_.reset();
    if (state_ == State::kPendingControlledShutdown) {
      shut_down();
      return;
    }
    registered_ = false;
    caught_up_ = false;
    state_ = State::kRegistering;
  }
  schedule_after_failure(now_ms);
}

void BrokerLifecycle::after_heartbeat_ok(int64_t now_ms, const protocol::BrokerHeartbeatResponse& response) {
  failed_attempts_ = 0;
  lease_end_ms_ = last_send_ms_ + config_.session_timeout_ms;
  caught_up_ = response.is_caught_up;
  switch (state_) {
    case State::kRecovery:
      if (!response.is_fenced) {
        state_ = State::kRunning;
        schedule(now_ms, config_.heartbeat_interval_ms);
      } else {
        // Kafka's quick pace while catching up, then the interval.
        schedule(now_ms, caught_up_ ? config_.heartbeat_interval_ms : kCatchUpPollMs);
      }
      return;
    case State::kRunning:
      // Fenced by the controller meanwhile (a session that expired while
      // this broker could not reach it): recover and ask again.
      if (response.is_fenced) state_ = State::kRecovery;
      schedule(now_ms, config_.heartbeat_interval_ms);
      return;
    case State::kPendingControlledShutdown:
      if (response.should_shut_down) {
        shut_down();
        return;
      }
      schedule(now_ms, got_shutdown_answer_ ? config_.heartbeat_interval_ms : kFirstShutdownPollMs);
      got_shutdown_answer_ = true;
      return;
    case State::kStarting:
    case State::kRegistering:
    case State::kShuttingDown:
      break;
  }
  ASSERT_MSG(false, lifecycle_state_name(state_));
}

void BrokerLifecycle::on_request_failed(int64_t now_ms) {
  ASSERT_MSG(in_flight_, "a failure without a request in flight");
  in_flight_ = false;
  if (state_ == State::kShuttingDown) return;
  schedule_after_failure(now_ms);
}

void BrokerLifecycle::set_ready_to_unfence(int64_t now_ms) {
  ready_to_unfence_ = true;
  schedule(now_ms, 0);
}

void BrokerLifecycle::begin_controlled_shutdown(int64_t now_ms) {
  if (state_ == State::kPendingControlledShutdown) return;
  if (state_ != State::kRunning) {
    // Not serving: nothing to hand over (Kafka skips controlled shutdown).
    shut_down();
    return;
  }
  state_ = State::kPendingControlledShutdown;
  schedule(now_ms, 0);  // tell the controller at once
}

bool BrokerLifecycle::may_lead(int64_t now_ms) const {
  if (state_ != State::kRunning && state_ != State::kPendingControlledShutdown) return false;
  return lease_end_ms_ && now_ms < *lease_end_ms_;
}

void BrokerLifecycle::schedule(int64_t now_ms, int64_t delay_ms) {
  if (next_immediate_) delay_ms = 0;
  next_immediate_ = in_flight_ && delay_ms == 0;  // due again as soon as the answer is in
  if (in_flight_ && delay_ms == 0) return;
  next_send_ms_ = now_ms + delay_ms;
}

void BrokerLifecycle::schedule_after_failure(int64_t now_ms) {
  next_immediate_ = false;  // never at once after a failure
  schedule(now_ms, backoff_ms());
}

// Kafka's ExponentialBackoff(100, 2, broker.session.timeout.ms, 0.02).
int64_t BrokerLifecycle::backoff_ms() {
  const double max_ms = double(config_.session_timeout_ms);
  const double exp_max =
      max_ms > kInitialBackoffMs ? std::log(max_ms / double(kInitialBackoffMs)) / std::log(2.0) : 0.0;
  const double exp = std::min(double(failed_attempts_), exp_max);
  ++failed_attempts_;
  const double jitter = 0.98 + 0.04 * double(rng_.uniform(1000000)) / 1000000.0;
  const int64_t ms = int64_t(jitter * double(kInitialBackoffMs) * std::pow(2.0, exp));
  return std::min(ms, config_.session_timeout_ms);
}

void BrokerLifecycle::shut_down() {
  state_ = State::kShuttingDown;
  lease_end_ms_.reset();
  next_send_ms_ = kNever;
}

}  // namespace samsa

#include "broker/lifecycle_driver.h"

#include <algorithm>
#include <utility>

#include "base/assert.h"
#include "base/log.h"

namespace samsa {

LifecycleDriver::LifecycleDriver(Runtime& runtime, LifecycleDriverOptions options, uint64_t seed,
                                 std::function<NodeId()> leader_hint, std::function<Offset()> metadata_offset)
    : runtime_(runtime), options_(std::move(options)), rng_(seed), lifecycle_(options_.lifecycle, rng_),
      metadata_offset_(std::move(metadata_offset)),
      channel_(runtime, "broker-" + std::to_string(options_.lifecycle.node_id.value()), options_.controllers,
               options_.connect_timeout_ms, std::move(leader_hint)) {}

LifecycleDriver::~LifecycleDriver() {
  *alive_ = false;
  if (send_timer_) runtime_.cancel_timer(send_timer_);
  if (timeout_timer_) runtime_.cancel_timer(timeout_timer_);
  if (shutdown_timer_) runtime_.cancel_timer(shutdown_timer_);
  if (lease_timer_) runtime_.cancel_timer(lease_timer_);
}

void LifecycleDriver::start() {
  lifecycle_.start(now_ms());
  schedule();
}

void LifecycleDriver::set_ready_to_unfence() {
  lifecycle_.set_ready_to_unfence(now_ms());
  schedule();
}

void LifecycleDriver::begin_controlled_shutdown(int64_t bound_ms, std::function<void()> done) {
  ASSERT_MSG(!shutdown_done_, "controlled shutdown begun twice");
  shutdown_done_ = std::move(done);
  lifecycle_.begin_controlled_shutdown(now_ms());
  if (lifecycle_.state() == BrokerLifecycleState::kShuttingDown) {
    return finish_shutdown("not serving yet, nothing to hand over");
  }
  LOG_INFO("broker", "controlled shutdown: asking the controller to move this broker's leaderships away "
           "(at most {} ms)", bound_ms);
  shutdown_timer_ = runtime_.add_timer(bound_ms, [this, bound_ms] {
    shutdown_timer_ = 0;
    LOG_WARN("broker", "controlled shutdown did not complete within {} ms (controlled.shutdown.max.retries x "
             "controlled.shutdown.retry.backoff.ms); shutting down anyway", bound_ms);
    finish_shutdown(nullptr);
  });
  check_shutdown();
  schedule();
}

// The lease ending means the controller has not answered for
// broker.session.timeout.ms: it fences this broker (and elects other
// leaders) on its own, so waiting longer gains nothing.
void LifecycleDriver::check_shutdown() {
  if (!shutdown_done_) return;
  if (lifecycle_.state() == BrokerLifecycleState::kShuttingDown) return finish_shutdown("the controller agreed");
  if (!lifecycle_.may_lead(now_ms())) {
    LOG_WARN("broker", "controlled shutdown: no answer from a controller within broker.session.timeout.ms; "
             "shutting down anyway");
    return finish_shutdown(nullptr);
  }
  // Checked again when the lease ends (an answer meanwhile re-arms it):
  // requests in flight may take longer than that to fail.
  if (lease_timer_) runtime_.cancel_timer(lease_timer_);
  const int64_t delay = std::max<int64_t>(0, lifecycle_.lease_end_ms().value_or(now_ms()) - now_ms());
  lease_timer_ = runtime_.add_timer(delay, [this] {
    lease_timer_ = 0;
    check_shutdown();
  });
}

void LifecycleDriver::finish_shutdown(const char* why) {
  if (!shutdown_done_) return;
  if (shutdown_timer_) runtime_.cancel_timer(shutdown_timer_);
  if (lease_timer_) runtime_.cancel_timer(lease_timer_);
  shutdown_timer_ = lease_timer_ = 0;
  if (why) LOG_INFO("broker", "controlled shutdown complete: {}", why);
  // Posted: `done` stops the loop, and this runs inside a callback of ours.
  runtime_.post([done = std::exchange(shutdown_done_, nullptr)] { done(); });
}

void LifecycleDriver::schedule() {
  if (send_timer_) runtime_.cancel_timer(send_timer_);
  send_timer_ = 0;
  int64_t next = lifecycle_.next_send_ms();
  if (next == INT64_MAX) return;
  send_timer_ = runtime_.add_timer(std::max<int64_t>(0, next - now_ms()), [this] {
    send_timer_ = 0;
    send_due();
  });
}

void LifecycleDriver::send_due() {
  std::optional<LifecycleRequest> request = lifecycle_.poll(now_ms(), metadata_offset_());
  if (!request) return schedule();
  const ControllerAddress target = channel_.target();
  KafkaClient& client = channel_.client_for(target);
  uint64_t seq = ++request_seq_;
  outstanding_ = seq;
  arm_request_timeout();
  auto alive = alive_;
  if (auto* registration = std::get_if<protocol::BrokerRegistrationRequest>(&*request)) {
    client.call<protocol::BrokerRegistrationRequest, protocol::BrokerRegistrationResponse>(
        *registration, kRegistrationVersion,
        [this, alive, seq, id = target.id](Result<protocol::BrokerRegistrationResponse> answer) {
          if (*alive) on_registration(seq, id, std::move(answer));
        });
  } else {
    client.call<protocol::BrokerHeartbeatRequest, protocol::BrokerHeartbeatResponse>(
        std::get<protocol::BrokerHeartbeatRequest>(*request), kHeartbeatVersion,
        [this, alive, seq, id = target.id](Result<protocol::BrokerHeartbeatResponse> answer) {
          if (*alive) on_heartbeat(seq, id, std::move(answer));
        });
  }
}

// The KafkaClient has no request timeout of its own: closing the
// connection fails the request (and settle() ignores a late answer).
void LifecycleDriver::arm_request_timeout() {
  if (timeout_timer_) runtime_.cancel_timer(timeout_timer_);
  timeout_timer_ = runtime_.add_timer(options_.request_timeout_ms, [this] {
    timeout_timer_ = 0;
    if (outstanding_ != 0) channel_.close();
  });
}

bool LifecycleDriver::settle(uint64_t request) {
  if (request != outstanding_) return false;
  outstanding_ = 0;
  if (timeout_timer_) runtime_.cancel_timer(timeout_timer_);
  timeout_timer_ = 0;
  return true;
}

// What an answer tells the channel (where the next request goes) and the log.
void LifecycleDriver::note_answer(protocol::ErrorCode code, NodeId target) {
  note_error(code, target);
  if (code == protocol::ErrorCode::kNotController) channel_.failed(target);
  if (code == protocol::ErrorCode::kNone) channel_.succeeded();
}

void LifecycleDriver::note_error(protocol::ErrorCode code, NodeId target) {
  if (code == protocol::ErrorCode::kNone || code == protocol::ErrorCode::kNotController) {
    last_logged_ = code;
    return;
  }
  if (code == last_logged_) return;  // once per kind, not per retry
  last_logged_ = code;
  if (code == protocol::ErrorCode::kInconsistentClusterId) {
    LOG_ERROR("broker", "the controller (node {}) refuses this broker: its cluster id {} is not the cluster's "
              "(INCONSISTENT_CLUSTER_ID). This node's log dirs were formatted for another cluster: format them "
              "with the cluster's id (samsa storage format --cluster-id ID --config FILE, the id every other "
              "node's meta.properties holds).", target.value(), options_.lifecycle.cluster_id);
  } else {
    LOG_WARN("broker", "the controller (node {}) answered {}; retrying", target.value(),
             protocol::error_name(code));
  }
}

void LifecycleDriver::on_registration(uint64_t request, NodeId target,
                                      Result<protocol::BrokerRegistrationResponse> answer) {
  if (!settle(request)) return;
  if (!answer.ok()) {
    channel_.failed(target);
    lifecycle_.on_request_failed(now_ms());
  } else {
    auto code = protocol::ErrorCode(answer->error_code);
    note_answer(code, target);
    if (code == protocol::ErrorCode::kNone) {
      LOG_INFO("broker", "registered with the controller (node {}): broker epoch {}", target.value(),
               answer->broker_epoch);
    }
    lifecycle_.on_registration_response(now_ms(), *answer);
  }
  check_shutdown();
  schedule();
}

void LifecycleDriver::on_heartbeat(uint64_t request, NodeId target, Result<protocol::BrokerHeartbeatResponse> answer) {
  if (!settle(request)) return;
  if (!answer.ok()) {
    channel_.failed(target);
    lifecycle_.on_request_failed(now_ms());
  } else {
    note_answer(protocol::ErrorCode(answer->error_code), target);
    BrokerLifecycleState before = lifecycle_.state();
    lifecycle_.on_heartbeat_response(now_ms(), *answer);
    if (lifecycle_.caught_up() && !initially_caught_up_) {
      initially_caught_up_ = true;
      LOG_INFO("broker", "caught up with the metadata log: serving clients");
    }
    if (lifecycle_.state() != before) {
      LOG_INFO("broker", "broker state {} -> {}", lifecycle_state_name(before),
               lifecycle_state_name(lifecycle_.state()));
    }
  }
  check_shutdown();
  schedule();
}

}  // namespace samsa

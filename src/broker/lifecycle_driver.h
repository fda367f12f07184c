#pragma once
// LifecycleDriver: runs a broker's BrokerLifecycle (pure, broker_lifecycle.h)
// on the runtime: a timer at next_send_ms() polls it, and what it returns
// (BrokerRegistration, BrokerHeartbeat) goes over a KafkaClient to the
// active controller's controller listener (ControllerChannel, which finds
// it); answers and failures go back to the lifecycle. As Kafka's
// BrokerLifecycleManager with its controller-channel manager:
//   - NOT_CONTROLLER or a failed dial or request moves on to the next
//     controller (the lifecycle backs off meanwhile);
//   - a request unanswered within controller.quorum.request.timeout.ms
//     closes the connection and counts as failed;
//   - INCONSISTENT_CLUSTER_ID is logged as an error that says what to fix;
//   - controlled shutdown (SIGTERM): WantShutDown until the controller
//     answers ShouldShutDown, bounded (begin_controlled_shutdown).
//
// Loop-thread only. The Runtime outlives it.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/rng.h"
#include "broker/broker_lifecycle.h"
#include "broker/controller_channel.h"
#include "io/runtime.h"

namespace samsa {

struct LifecycleDriverOptions {
  BrokerLifecycleConfig lifecycle;
  std::vector<ControllerAddress> controllers;  // controller.quorum.voters
  int64_t connect_timeout_ms = 10000;          // socket.connection.setup.timeout.ms
  int64_t request_timeout_ms = 2000;           // controller.quorum.request.timeout.ms
};

class LifecycleDriver {
 public:
  static constexpr int16_t kRegistrationVersion = 3;
  static constexpr int16_t kHeartbeatVersion = 1;

  // leader_hint: the active controller this node knows of (kNoNode: none);
  // metadata_offset: the highest metadata offset this broker has applied.
  LifecycleDriver(Runtime& runtime, LifecycleDriverOptions options, uint64_t seed,
                  std::function<NodeId()> leader_hint, std::function<Offset()> metadata_offset);
  ~LifecycleDriver();
  LifecycleDriver(const LifecycleDriver&) = delete;
  LifecycleDriver& operator=(const LifecycleDriver&) = delete;

  void start();
  // The broker's logs are loaded: it may be unfenced.
  void set_ready_to_unfence();

  // Asks the controller to move this broker's leaderships away; `done`
  // once it answers ShouldShutDown, or anyway (a warning) when the lease
  // ends without an answer (the controller is unreachable: it fences this
  // broker meanwhile) or after bound_ms. Called once.
  void begin_controlled_shutdown(int64_t bound_ms, std::function<void()> done);
  // Self-fencing: unfenced and within the lease (BrokerLifecycle::may_lead).
  bool may_lead() const { return lifecycle_.may_lead(now_ms()); }

  const BrokerLifecycle& lifecycle() const { return lifecycle_; }
  // The controller has said once that this broker replayed the metadata
  // log up to its registration (Kafka's initialCatchUpFuture): from then on
  // its image is not older than the cluster's was when it registered.
  bool initially_caught_up() const { return initially_caught_up_; }

 private:
  int64_t now_ms() const { return runtime_.clock().monotonic_ms(); }
  void schedule();
  void send_due();
  void arm_request_timeout();
  void on_registration(uint64_t request, NodeId target, Result<protocol::BrokerRegistrationResponse> answer);
  void on_heartbeat(uint64_t request, NodeId target, Result<protocol::BrokerHeartbeatResponse> answer);
  bool settle(uint64_t request);  // false: an answer to a request already given up
  void note_answer(protocol::ErrorCode code, NodeId target);
  void note_error(protocol::ErrorCode code, NodeId target);
  // Controlled shutdown: `done` when the lifecycle is SHUTTING_DOWN or the
  // lease has ended.
  void check_shutdown();
  void finish_shutdown(const char* why);

  Runtime& runtime_;
  LifecycleDriverOptions options_;
  Rng rng_;
  BrokerLifecycle lifecycle_;
  std::function<Offset()> metadata_offset_;
  ControllerChannel channel_;
  uint64_t request_seq_ = 0;
  uint64_t outstanding_ = 0;  // the request in flight (0: none)
  TimerId send_timer_ = 0;
  TimerId timeout_timer_ = 0;
  std::function<void()> shutdown_done_;  // set while a controlled shutdown waits
  TimerId shutdown_timer_ = 0;           // its bound
  TimerId lease_timer_ = 0;              // its check when the lease ends
  protocol::ErrorCode last_logged_ = protocol::ErrorCode::kNone;
  bool initially_caught_up_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace samsa

#include "broker/broker_lifecycle.h"

#include <gtest/gtest.h>

namespace samsa {
namespace {

using protocol::ErrorCode;
using State = BrokerLifecycleState;

// Drives one BrokerLifecycle with an explicit clock, answering its
// requests by hand.
class BrokerLifecycleTest : public ::testing::Test {
 protected:
  BrokerLifecycleTest() : rng_(3), lifecycle_(config(), rng_) {}

  static BrokerLifecycleConfig config() {
    BrokerLifecycleConfig c;
    c.node_id = NodeId(2);
    c.cluster_id = "cluster-a";
    c.incarnation_id.bytes[0] = 7;
    c.listeners = {{"PLAINTEXT", "127.0.0.1", 9092, 0}};
    c.rack = "r1";
    return c;
  }

  template <typename T>
  T send() {
    EXPECT_LE(lifecycle_.next_send_ms(), now_);
    auto request = lifecycle_.poll(now_, metadata_offset_);
    EXPECT_TRUE(request.has_value());
    EXPECT_TRUE(request && std::holds_alternative<T>(*request));
    return request && std::holds_alternative<T>(*request) ? std::get<T>(*request) : T{};
  }

  void register_with_epoch(int64_t epoch) {
    send<protocol::BrokerRegistrationRequest>();
    protocol::BrokerRegistrationResponse ok;
    ok.broker_epoch = epoch;
    lifecycle_.on_registration_response(now_, ok);
  }

  protocol::BrokerHeartbeatRequest heartbeat(bool fenced, bool caught_up = true, bool should_shut_down = false,
                                             ErrorCode error = ErrorCode::kNone) {
    auto request = send<protocol::BrokerHeartbeatRequest>();
    protocol::BrokerHeartbeatResponse response;
    response.error_code = int16_t(error);
    response.is_fenced = fenced;
    response.is_caught_up = caught_up;
    response.should_shut_down = should_shut_down;
    lifecycle_.on_heartbeat_response(now_, response);
    return request;
  }

  void to_running() {
    lifecycle_.start(now_);
    register_with_epoch(40);
    lifecycle_.set_ready_to_unfence(now_);
    heartbeat(/*fenced=*/false);
    ASSERT_EQ(lifecycle_.state(), State::kRunning);
  }

  int64_t now_ = 5000;
  Offset metadata_offset_{12};
  Rng rng_;
  BrokerLifecycle lifecycle_;
};

TEST_F(BrokerLifecycleTest, RegistersThenRecoversThenRuns) {
  EXPECT_EQ(lifecycle_.state(), State::kStarting);
  EXPECT_EQ(lifecycle_.next_send_ms(), INT64_MAX);
  lifecycle_.start(now_);
  EXPECT_EQ(lifecycle_.state(), State::kRegistering);
  auto registration = send<protocol::BrokerRegistrationRequest>();
  EXPECT_EQ(registration.broker_id, 2);
  EXPECT_EQ(registration.cluster_id, "cluster-a");
  EXPECT_EQ(registration.incarnation_id.bytes[0], 7);
  ASSERT_EQ(registration.listeners.size(), 1u);
  EXPECT_EQ(registration.listeners[0].port, 9092);
  EXPECT_EQ(registration.rack, "r1");
  EXPECT_FALSE(lifecycle_.poll(now_, metadata_offset_).has_value());  // one in flight

  protocol::BrokerRegistrationResponse ok;
  ok.broker_epoch = 40;
  lifecycle_.on_registration_response(now_, ok);
  EXPECT_EQ(lifecycle_.state(), State::kRecovery);
  EXPECT_EQ(lifecycle_.broker_epoch(), BrokerEpoch(40));
  EXPECT_FALSE(lifecycle_.may_lead(now_));

  // Not caught up yet, not ready: fenced, polled quickly.
  auto first = heartbeat(/*fenced=*/true, /*caught_up=*/false);
  EXPECT_EQ(first.broker_epoch, 40);
  EXPECT_EQ(first.current_metadata_offset, 12);
  EXPECT_TRUE(first.want_fence);
  EXPECT_FALSE(first.want_shut_down);
  EXPECT_EQ(lifecycle_.next_send_ms(), now_ + BrokerLifecycle::kCatchUpPollMs);
  now_ += 10;
  heartbeat(true, true);
  EXPECT_TRUE(lifecycle_.caught_up());
  EXPECT_EQ(lifecycle_.next_send_ms(), now_ + 2000);

  // Logs loaded: ask to be unfenced at once.
  lifecycle_.set_ready_to_unfence(now_);
  EXPECT_EQ(lifecycle_.next_send_ms(), now_);
  auto asking = heartbeat(/*fenced=*/false);
  EXPECT_FALSE(asking.want_fence);
  EXPECT_EQ(lifecycle_.state(), State::kRunning);
  EXPECT_TRUE(lifecycle_.may_lead(now_));
  EXPECT_EQ(lifecycle_.next_send_ms(), now_ + 2000);
}

TEST_F(BrokerLifecycleTest, FailuresBackOffExponentiallyUpToTheSessionTimeout) {
  lifecycle_.start(now_);
  std::vector<int64_t> delays;
  for (int i = 0; i < 9; ++i) {
    send<protocol::BrokerRegistrationRequest>();
    protocol::BrokerRegistrationResponse refused;
    refused.error_code = int16_t(ErrorCode::kDuplicateBrokerRegistration);
    lifecycle_.on_registration_response(now_, refused);
    EXPECT_EQ(lifecycle_.state(), State::kRegistering);
    EXPECT_EQ(lifecycle_.last_error(), ErrorCode::kDuplicateBrokerRegistration);
    delays.push_back(lifecycle_.next_send_ms() - now_);
    now_ = lifecycle_.next_send_ms();
  }
  // 100 ms doubling, 2% jitter, capped at broker.session.timeout.ms.
  const int64_t expected[] = {100, 200, 400, 800, 1600, 3200, 6400, 9000, 9000};
  for (size_t i = 0; i < delays.size(); ++i) {
    EXPECT_GE(delays[i], expected[i] * 98 / 100) << i;
    EXPECT_LE(delays[i], expected[i] * 102 / 100) << i;
    EXPECT_LE(delays[i], 9000) << i;
  }
  // A timeout backs off the same way; a success resets the count.
  send<protocol::BrokerRegistrationRequest>();
  lifecycle_.on_request_failed(now_);
  EXPECT_EQ(lifecycle_.failed_attempts(), 10);
  now_ = lifecycle_.next_send_ms();
  register_with_epoch(3);
  EXPECT_EQ(lifecycle_.failed_attempts(), 0);
  EXPECT_EQ(lifecycle_.next_send_ms(), now_);
}

TEST_F(BrokerLifecycleTest, StaleBrokerEpochRegistersAgain) {
  to_running();
  now_ += 2000;
  heartbeat(false, true, false, ErrorCode::kStaleBrokerEpoch);
  EXPECT_EQ(lifecycle_.state(), State::kRegistering);
  EXPECT_FALSE(lifecycle_.may_lead(now_));
  now_ = lifecycle_.next_send_ms();
  register_with_epoch(90);
  EXPECT_EQ(lifecycle_.broker_epoch(), BrokerEpoch(90));
  EXPECT_EQ(lifecycle_.state(), State::kRecovery);
  auto hb = heartbeat(false);
  EXPECT_EQ(hb.broker_epoch, 90);
  EXPECT_FALSE(hb.want_fence);  // still ready: asks to be unfenced again
  EXPECT_EQ(lifecycle_.state(), State::kRunning);
}

TEST_F(BrokerLifecycleTest, SelfFencesWhenNoHeartbeatSucceedsWithinTheSession) {
  to_running();
  const int64_t sent = now_;  // the lease counts from the send of the last answered heartbeat
  now_ += 2000;
  send<protocol::BrokerHeartbeatRequest>();
  lifecycle_.on_request_failed(now_);
  now_ = lifecycle_.next_send_ms();
  send<protocol::BrokerHeartbeatRequest>();
  protocol::BrokerHeartbeatResponse not_controller;
  not_controller.error_code = int16_t(ErrorCode::kNotController);
  lifecycle_.on_heartbeat_response(now_, not_controller);
  EXPECT_EQ(lifecycle_.state(), State::kRunning);
  EXPECT_TRUE(lifecycle_.may_lead(sent + 8999));
  EXPECT_FALSE(lifecycle_.may_lead(sent + 9000));
  // A heartbeat that gets through renews it.
  now_ = std::max(lifecycle_.next_send_ms(), sent + 9500);
  const int64_t renewed = now_;
  heartbeat(false);
  EXPECT_TRUE(lifecycle_.may_lead(renewed + 8999));
  EXPECT_FALSE(lifecycle_.may_lead(renewed + 9000));
}

// The controller hears a heartbeat after it was sent: the broker's lease
// counts from the send, so it never outlives the controller's session.
TEST_F(BrokerLifecycleTest, TheLeaseCountsFromTheSendNotTheAnswer) {
  to_running();
  now_ = lifecycle_.next_send_ms();
  const int64_t sent = now_;
  send<protocol::BrokerHeartbeatRequest>();
  protocol::BrokerHeartbeatResponse ok;
  ok.is_fenced = false;
  ok.is_caught_up = true;
  lifecycle_.on_heartbeat_response(sent + 1500, ok);  // a slow answer
  EXPECT_TRUE(lifecycle_.may_lead(sent + 8999));
  EXPECT_FALSE(lifecycle_.may_lead(sent + 9000));
}

TEST_F(BrokerLifecycleTest, ARunningBrokerFencedByTheControllerRecovers) {
  to_running();
  now_ += 2000;
  heartbeat(/*fenced=*/true);
  EXPECT_EQ(lifecycle_.state(), State::kRecovery);
  EXPECT_FALSE(lifecycle_.may_lead(now_));
  now_ = lifecycle_.next_send_ms();
  heartbeat(false);
  EXPECT_EQ(lifecycle_.state(), State::kRunning);
  EXPECT_TRUE(lifecycle_.may_lead(now_));
}

TEST_F(BrokerLifecycleTest, ControlledShutdownWaitsForTheController) {
  to_running();
  now_ += 500;
  lifecycle_.begin_controlled_shutdown(now_);
  EXPECT_EQ(lifecycle_.state(), State::kPendingControlledShutdown);
  EXPECT_EQ(lifecycle_.next_send_ms(), now_);  // at once
  auto asking = heartbeat(false, true, /*should_shut_down=*/false);
  EXPECT_TRUE(asking.want_shut_down);
  EXPECT_TRUE(lifecycle_.may_lead(now_));  // leads until moved away
  EXPECT_EQ(lifecycle_.next_send_ms(), now_ + BrokerLifecycle::kFirstShutdownPollMs);
  now_ = lifecycle_.next_send_ms();
  heartbeat(false, true, false);
  EXPECT_EQ(lifecycle_.next_send_ms(), now_ + 2000);
  now_ = lifecycle_.next_send_ms();
  heartbeat(true, true, /*should_shut_down=*/true);
  EXPECT_EQ(lifecycle_.state(), State::kShuttingDown);
  EXPECT_FALSE(lifecycle_.may_lead(now_));
  EXPECT_EQ(lifecycle_.next_send_ms(), INT64_MAX);
}

TEST_F(BrokerLifecycleTest, ShutdownBeforeRunningIsImmediate) {
  lifecycle_.start(now_);
  register_with_epoch(4);
  lifecycle_.begin_controlled_shutdown(now_);
  EXPECT_EQ(lifecycle_.state(), State::kShuttingDown);
  EXPECT_EQ(lifecycle_.next_send_ms(), INT64_MAX);
}

TEST_F(BrokerLifecycleTest, AskingWhileInFlightSendsAsSoonAsTheAnswerIsIn) {
  lifecycle_.start(now_);
  register_with_epoch(4);
  send<protocol::BrokerHeartbeatRequest>();
  lifecycle_.set_ready_to_unfence(now_);  // in flight: remembered
  EXPECT_EQ(lifecycle_.next_send_ms(), INT64_MAX);
  protocol::BrokerHeartbeatResponse fenced;
  fenced.is_fenced = true;
  fenced.is_caught_up = true;
  lifecycle_.on_heartbeat_response(now_ + 3, fenced);
  EXPECT_EQ(lifecycle_.next_send_ms(), now_ + 3);
}

TEST(BrokerLifecycleEndpoints, AdvertisedListenersWithKafkasSecurityProtocolIds) {
  BrokerConfig config;
  config.advertised_listeners = {{{"PLAINTEXT", "a", 9092}, "PLAINTEXT"}, {{"SECURE", "b", 9093}, "SASL_SSL"}};
  std::vector<BrokerEndpoint> endpoints = advertised_endpoints(config);
  ASSERT_EQ(endpoints.size(), 2u);
  EXPECT_EQ(endpoints[0], (BrokerEndpoint{"PLAINTEXT", "a", 9092, 0}));
  EXPECT_EQ(endpoints[1], (BrokerEndpoint{"SECURE", "b", 9093, 3}));
}

}  // namespace
}  // namespace samsa

#include "testing/sim_stream_net.h"

#include <gtest/gtest.h>

#include <cerrno>

#include "testing/sim_file_system.h"
#include "testing/sim_runtime.h"
#include "testing/sim_test_support.h"
#include "testing/sim_world.h"

namespace samsa::sim {
namespace {

constexpr int64_t kLong = 600'000;  // ms: a generous bound for run_until

class SimNetTest : public ::testing::Test {
 protected:
  SimNetTest() : world(7), server(world.add_host()), client(world.add_host()) {}

  void listen(uint16_t port = 9092, std::string host = "") {
    ListenOptions o;
    o.host = std::move(host);
    o.port = port;
    auto l = world.runtime(server).network().listen(o, [this](StreamPtr s) {
      accepted.push_back(std::make_unique<TestPeer>(std::move(s)));
    });
    ASSERT_TRUE(l.ok()) << l.error().to_string();
    listener = std::move(l).value();
  }

  // Dials from `client`; the outcome lands in `dialed` / `dial_error`.
  ConnectId dial(const std::string& host, uint16_t port = 9092, int64_t timeout_ms = 30'000) {
    done = false;
    return world.runtime(client).network().connect(host, port, timeout_ms, [this](Result<StreamPtr> r) {
      done = true;
      if (r.ok()) {
        dialed = std::make_unique<TestPeer>(std::move(r).value());
      } else {
        dial_error = r.error();
      }
    });
  }

  void connect_pair() {
    listen();
    dial(world.address(server));
    ASSERT_TRUE(world.run_until([&] { return done && !accepted.empty(); }, kLong));
    ASSERT_NE(dialed, nullptr) << dial_error->to_string();
  }

  SimWorld world;
  HostId server;
  HostId client;
  std::unique_ptr<Listener> listener;
  std::vector<std::unique_ptr<TestPeer>> accepted;
  std::unique_ptr<TestPeer> dialed;
  std::optional<Error> dial_error;
  bool done = false;
};

TEST_F(SimNetTest, DeliversBothWaysInOrderWithAddresses) {
  connect_pair();
  EXPECT_EQ(dialed->stream().peer_address(), "10.0.0.1:9092");
  EXPECT_EQ(dialed->stream().local_address(), accepted[0]->stream().peer_address());
  EXPECT_EQ(accepted[0]->stream().local_address(), "10.0.0.1:9092");
  Bytes up = test_pattern(300'000, 1);
  Bytes down = test_pattern(200'000, 2);
  int calls_before = dialed->calls;
  dialed->send(up);
  accepted[0]->send(down);
  dialed->stream().set_interest(true, true);
  EXPECT_EQ(dialed->calls, calls_before);  // never called inside the call that made it ready
  EXPECT_TRUE(accepted[0]->received.empty());
  ASSERT_TRUE(world.run_until([&] { return accepted[0]->received.size() == up.size() && dialed->received.size() == down.size(); },
                              kLong));
  EXPECT_EQ(accepted[0]->received, up);
  EXPECT_EQ(dialed->received, down);
  EXPECT_GT(world.net().stats().chunks, 20u);  // in many chunks of drawn sizes
}

TEST_F(SimNetTest, BackpressureThenWritabilityWhenTheReaderResumes) {
  connect_pair();
  accepted[0]->set_reading(false);
  Bytes big = test_pattern(1'000'000);
  dialed->send(big);
  world.run_for_ms(10'000);
  const NetOptions& o = world.net().options();
  // Nothing beyond the receiver's buffer and the sender's buffer was taken.
  EXPECT_GT(dialed->would_block, 0);
  EXPECT_LE(dialed->sent(), size_t(o.send_buffer_bytes + o.receive_buffer_bytes));
  EXPECT_FALSE(dialed->all_sent());
  EXPECT_TRUE(accepted[0]->received.empty());
  accepted[0]->set_reading(true);
  ASSERT_TRUE(world.run_until([&] { return accepted[0]->received.size() == big.size(); }, kLong));
  EXPECT_EQ(accepted[0]->received, big);
  EXPECT_TRUE(dialed->all_sent());
}

TEST_F(SimNetTest, PartitionHoldsBytesAndHealingDeliversThemInOrder) {
  connect_pair();
  world.net().cut_both(server, client);
  Bytes msg = test_pattern(50'000);
  dialed->send(msg);
  world.run_for_ms(60'000);
  EXPECT_TRUE(accepted[0]->received.empty());
  EXPECT_EQ(accepted[0]->read_error, 0);  // held, not lost or reset
  world.net().heal();
  ASSERT_TRUE(world.run_until([&] { return accepted[0]->received.size() == msg.size(); }, kLong));
  EXPECT_EQ(accepted[0]->received, msg);
}

TEST_F(SimNetTest, OneWayCutHoldsOneDirectionOnly) {
  connect_pair();
  world.net().cut(client, server);
  dialed->send(test_pattern(1000));
  accepted[0]->send(test_pattern(2000));
  ASSERT_TRUE(world.run_until([&] { return dialed->received.size() == 2000; }, kLong));
  world.run_for_ms(5000);
  EXPECT_TRUE(accepted[0]->received.empty());
  world.net().heal(client, server);
  ASSERT_TRUE(world.run_until([&] { return accepted[0]->received.size() == 1000; }, kLong));
}

TEST_F(SimNetTest, HeldBeyondTheUserTimeoutResets) {
  NetOptions o = world.net().options();
  o.user_timeout_ms = 30'000;
  world.net().set_options(o);
  connect_pair();
  world.net().cut(client, server);
  dialed->send(test_pattern(100));
  ASSERT_TRUE(world.run_until([&] { return accepted[0]->read_error != 0 && dialed->hangups > 0; }, kLong));
  EXPECT_EQ(accepted[0]->read_error, ECONNRESET);
  EXPECT_GE(world.now_ms(), 30'000);
}

TEST_F(SimNetTest, ConnectAcrossAPartitionTimesOut) {
  listen();
  world.net().isolate(server);
  dial(world.address(server), 9092, 3000);
  ASSERT_TRUE(world.run_until([&] { return done; }, kLong));
  ASSERT_TRUE(dial_error.has_value());
  EXPECT_EQ(dial_error->kind(), ErrorKind::kTimedOut);
  EXPECT_EQ(world.now_ms(), 3000);
  EXPECT_TRUE(accepted.empty());
}

TEST_F(SimNetTest, ConnectSucceedsWhenThePartitionHealsBeforeTheTimeout) {
  listen();
  world.net().cut(server, client);  // the SYN-ACK direction
  dial(world.address(server), 9092, 10'000);
  world.run_for_ms(2500);
  EXPECT_FALSE(done);
  world.net().heal();
  ASSERT_TRUE(world.run_until([&] { return done; }, kLong));
  ASSERT_NE(dialed, nullptr);
  EXPECT_LT(world.now_ms(), 10'000);
}

TEST_F(SimNetTest, RefusedWithoutListenerOnCommandAndUnreachable) {
  dial(world.address(server));
  ASSERT_TRUE(world.run_until([&] { return done; }, kLong));
  ASSERT_TRUE(dial_error.has_value());
  EXPECT_NE(dial_error->message().find("Connection refused"), std::string::npos) << dial_error->message();

  listen();
  world.net().refuse_connects(server, true);
  dial_error.reset();
  dial(world.address(server));
  ASSERT_TRUE(world.run_until([&] { return done; }, kLong));
  ASSERT_TRUE(dial_error.has_value());
  EXPECT_NE(dial_error->message().find("Connection refused"), std::string::npos);
  EXPECT_TRUE(accepted.empty());

  world.net().refuse_connects(server, false);
  dial_error.reset();
  dial("10.0.0.99");
  ASSERT_TRUE(world.run_until([&] { return done; }, kLong));
  ASSERT_TRUE(dial_error.has_value());
  EXPECT_NE(dial_error->message().find("No route to host"), std::string::npos) << dial_error->message();
}

TEST_F(SimNetTest, LoopbackListenerIsReachableFromItsOwnHostOnly) {
  listen(9093, "127.0.0.1");
  dial(world.address(server), 9093);
  ASSERT_TRUE(world.run_until([&] { return done; }, kLong));
  EXPECT_TRUE(dial_error.has_value());
  bool own_done = false;
  world.runtime(server).network().connect("127.0.0.1", 9093, 1000, [&](Result<StreamPtr> r) {
    own_done = true;
    EXPECT_TRUE(r.ok());
  });
  ASSERT_TRUE(world.run_until([&] { return own_done && accepted.size() == 1; }, kLong));
  EXPECT_EQ(accepted[0]->stream().local_address(), "127.0.0.1:9093");
}

TEST_F(SimNetTest, ListenRejectsBusyPortsAndForeignAddresses) {
  listen();
  ListenOptions o;
  o.port = 9092;
  EXPECT_FALSE(world.runtime(server).network().listen(o, [](StreamPtr) {}).ok());
  o.host = "10.0.0.2";  // the other host's address
  o.port = 9094;
  EXPECT_FALSE(world.runtime(server).network().listen(o, [](StreamPtr) {}).ok());
  o.host = "";
  o.port = 0;
  auto ephemeral = world.runtime(server).network().listen(o, [](StreamPtr) {});
  ASSERT_TRUE(ephemeral.ok());
  EXPECT_GE((*ephemeral)->port(), 32768);
}

TEST_F(SimNetTest, ResetOnCommandReachesBothEnds) {
  connect_pair();
  accepted[0]->send(test_pattern(10));
  ASSERT_TRUE(world.run_until([&] { return dialed->received.size() == 10; }, kLong));
  EXPECT_EQ(world.net().reset_between(client, server), 1u);
  ASSERT_TRUE(world.run_until([&] { return dialed->hangups > 0 && accepted[0]->hangups > 0; }, kLong));
  EXPECT_EQ(dialed->read_error, ECONNRESET);
  EXPECT_EQ(accepted[0]->read_error, ECONNRESET);
  ByteView p = as_bytes("x");
  IoResult w = dialed->stream().write(&p, 1);
  EXPECT_EQ(w.status, IoResult::Status::kError);
  EXPECT_EQ(world.net().open_connections(), 0u);
}

TEST_F(SimNetTest, CancelledConnectNeverCompletesAndClosesWhatConnected) {
  listen();
  ConnectId id = dial(world.address(server));
  ASSERT_TRUE(world.run_until([&] { return !accepted.empty(); }, kLong));  // the server has it already
  world.runtime(client).network().cancel_connect(id);
  ASSERT_TRUE(world.run_until([&] { return accepted[0]->hangups > 0; }, kLong));
  world.run_until_idle();
  EXPECT_FALSE(done);
  EXPECT_EQ(accepted[0]->read_error, ECONNRESET);
  EXPECT_EQ(world.runtime(client).sim_network().pending_connects(), 0u);
  world.runtime(client).network().cancel_connect(id);  // no-op once gone
}

TEST_F(SimNetTest, LossIsDelayNeverLostBytes) {
  LinkFaults f;
  f.loss = 0.3;
  world.net().set_default_faults(f);
  connect_pair();
  Bytes msg = test_pattern(200'000);
  dialed->send(msg);
  ASSERT_TRUE(world.run_until([&] { return accepted[0]->received.size() == msg.size(); }, kLong));
  EXPECT_EQ(accepted[0]->received, msg);
  EXPECT_GT(world.net().stats().retransmits, 0u);
  EXPECT_EQ(world.net().stats().resets, 0u);
}

TEST_F(SimNetTest, LossBeyondTheRetransmissionBoundResets) {
  connect_pair();
  LinkFaults f;
  f.loss = 1.0;
  f.max_retransmits = 3;
  world.net().set_link_faults(client, server, f);
  dialed->send(test_pattern(100));
  ASSERT_TRUE(world.run_until([&] { return dialed->hangups > 0 && accepted[0]->hangups > 0; }, kLong));
  EXPECT_EQ(accepted[0]->read_error, ECONNRESET);
  EXPECT_TRUE(accepted[0]->received.empty());
  EXPECT_GE(world.now_ms(), 200 + 400 + 800 + 1600);  // the RTOs, doubling, came first
}

TEST_F(SimNetTest, CloseDeliversTheBytesThenEndOfStream) {
  connect_pair();
  dialed->send(test_pattern(5000));
  ASSERT_TRUE(dialed->all_sent());
  dialed->close();
  ASSERT_TRUE(world.run_until([&] { return accepted[0]->eof; }, kLong));
  EXPECT_EQ(accepted[0]->received, test_pattern(5000));
  EXPECT_EQ(accepted[0]->read_error, 0);
  EXPECT_EQ(accepted[0]->hangups, 0);  // a FIN is end of stream, not a failure
  accepted[0]->close();
  world.run_until_idle();
  EXPECT_EQ(world.net().open_connections(), 0u);
}

TEST_F(SimNetTest, CloseWithUnreadBytesResetsThePeer) {
  connect_pair();
  accepted[0]->set_reading(false);
  dialed->send(test_pattern(100));
  world.run_for_ms(1000);
  accepted[0]->close();  // 100 bytes unread: RST
  ASSERT_TRUE(world.run_until([&] { return dialed->hangups > 0; }, kLong));
  EXPECT_EQ(dialed->read_error, ECONNRESET);
}

TEST_F(SimNetTest, SendFileSendsTheFileBytes) {
  connect_pair();
  FileSystem& fs = world.runtime(client).files();
  FilePtr f = *fs.open("/segment", OpenMode::kCreate);
  Bytes content = test_pattern(100'000, 9);
  ASSERT_TRUE(f->write_at(content, 0).ok());
  int64_t position = 1000;
  while (position < 90'000) {
    IoResult r = dialed->stream().send_file(*f, position, size_t(90'000 - position));
    if (r.status == IoResult::Status::kWouldBlock) {
      world.step();
      continue;
    }
    ASSERT_EQ(r.status, IoResult::Status::kDone);
    position += int64_t(r.bytes);
  }
  EXPECT_EQ(dialed->stream().send_file(*f, 100'000, 10).status, IoResult::Status::kEof);  // beyond the end
  ASSERT_TRUE(world.run_until([&] { return accepted[0]->received.size() == 89'000; }, kLong));
  EXPECT_EQ(accepted[0]->received, Bytes(content.begin() + 1000, content.begin() + 90'000));
}

// A failed stream reports hangup until it is closed, whatever the
// interests, as epoll does: a handler that ignores it spins, and the world
// says so instead of spinning for ever.
TEST_F(SimNetTest, AHangupIgnoredIsALivelock) {
  struct Deaf : Stream::Handler {
    void on_stream_ready(bool, bool, bool) override {}
  };
  EXPECT_DEATH(
      {
        world.set_livelock_limit(1000);
        connect_pair();
        Deaf deaf;
        accepted[0]->stream().set_handler(&deaf);
        accepted[0]->stream().set_interest(false, false);
        world.net().reset_between(client, server);
        world.run_for_ms(1000);
      },
      "livelock");
}

TEST_F(SimNetTest, ListenerGoneMeansRefused) {
  listen();
  listener.reset();
  dial(world.address(server));
  ASSERT_TRUE(world.run_until([&] { return done; }, kLong));
  EXPECT_TRUE(dial_error.has_value());
}

TEST_F(SimNetTest, SlowLinkTakesItsLatency) {
  LinkFaults slow;
  slow.min_latency_us = 50'000;
  slow.max_latency_us = 50'000;
  world.net().set_link_faults(client, server, slow);
  connect_pair();  // SYN over the slow direction
  EXPECT_GE(world.now_ms(), 50);
  int64_t start = world.now_ms();
  dialed->send(test_pattern(10));
  ASSERT_TRUE(world.run_until([&] { return accepted[0]->received.size() == 10; }, kLong));
  EXPECT_EQ(world.now_ms() - start, 50);
}

}  // namespace
}  // namespace samsa::sim

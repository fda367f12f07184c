// run_server end to end with a stand-in Service: binds an ephemeral port,
// answers a real client, and shuts down cleanly on SIGTERM.

#include "server/run_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <thread>

#include "broker/service.h"

namespace samsa {
namespace {

struct Observed {
  int starts = 0;
  int shutdowns = 0;
  int closes = 0;
  uint16_t port = 0;
  std::string advertised;
  std::string answer;
};

// Echoes each frame back; its client thread talks to the server, then
// sends SIGTERM to the process.
class EchoService : public Service, public FrameSink {
 public:
  explicit EchoService(Observed* seen) : seen_(seen) {}
  ~EchoService() override {
    if (client_.joinable()) client_.join();
  }
  FrameSink& sink() override { return *this; }
  Status start(Runtime&, const BrokerConfig& config) override {
    ++seen_->starts;
    seen_->port = config.listeners.at(0).endpoint.port;
    seen_->advertised = config.advertised_listeners.at(0).endpoint.to_string();
    // Started here, after run_server blocked the signals: inherits the mask.
    client_ = std::thread([this, port = seen_->port] { talk(port); });
    return ok_status();
  }
  void shutdown() override {
    ++seen_->shutdowns;
    if (client_.joinable()) client_.join();
  }
  void on_frame(InboundFrame frame, ReplyFn reply) override {
    OutBuffer out;
    out.bytes().resize(4);
    store_be32(out.bytes().data(), uint32_t(frame.frame->size()));
    out.bytes().insert(out.bytes().end(), frame.frame->begin(), frame.frame->end());
    reply(Reply{ReplyKind::kSend, std::move(out)});
  }
  void on_close(uint64_t) override { ++seen_->closes; }

 private:
  void talk(uint16_t port) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{20, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
      const uint8_t request[] = {0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o'};
      (void)::send(fd, request, sizeof request, MSG_NOSIGNAL);
      char buf[9];
      size_t got = 0;
      while (got < sizeof buf) {
        ssize_t n = ::recv(fd, buf + got, sizeof buf - got, 0);
        if (n <= 0) break;
        got += size_t(n);
      }
      if (got == sizeof buf) seen_->answer.assign(buf + 4, 5);
    }
    // The connection stays open: shutdown must close it (on_close).
    ::kill(::getpid(), SIGTERM);
    uint8_t b;
    (void)::recv(fd, &b, 1, 0);  // until the server closes it
    ::close(fd);
  }

  Observed* seen_;
  std::thread client_;
};

int run(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return run_server(int(argv.size()), argv.data());
}

TEST(RunServer, ServesUntilSigtermThenShutsDown) {
  Observed seen;
  set_service_factory([&] { return std::make_unique<EchoService>(&seen); });
  testing::internal::CaptureStderr();
  int rc = run({"server", "--override", "listeners=PLAINTEXT://127.0.0.1:0", "--override", "node.id=3"});
  std::string log = testing::internal::GetCapturedStderr();
  set_service_factory(nullptr);
  EXPECT_EQ(rc, 0) << log;
  EXPECT_EQ(seen.starts, 1);
  EXPECT_EQ(seen.shutdowns, 1);
  EXPECT_EQ(seen.closes, 1);
  EXPECT_NE(seen.port, 0);
  EXPECT_EQ(seen.advertised, "PLAINTEXT://127.0.0.1:" + std::to_string(seen.port));
  EXPECT_EQ(seen.answer, "hello");
  EXPECT_NE(log.find("received SIGTERM"), std::string::npos) << log;
  EXPECT_NE(log.find("samsa node 3 started"), std::string::npos) << log;
}

TEST(RunServer, InvalidConfigExitsWithOneAndNamesTheKey) {
  Observed seen;
  set_service_factory([&] { return std::make_unique<EchoService>(&seen); });
  testing::internal::CaptureStderr();
  int rc = run({"server", "--override", "num.partitions=abc"});
  std::string log = testing::internal::GetCapturedStderr();
  set_service_factory(nullptr);
  EXPECT_EQ(rc, 1);
  EXPECT_NE(log.find("Invalid value abc for configuration num.partitions: Not a number of type INT"),
            std::string::npos)
      << log;
  EXPECT_EQ(seen.starts, 0);
}

TEST(RunServer, MissingConfigFileAndBadArgsExitWithOne) {
  testing::internal::CaptureStderr();
  EXPECT_EQ(run({"server", "--config", "/nonexistent/server.properties"}), 1);
  EXPECT_EQ(run({"server", "--bogus"}), 1);
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("/nonexistent/server.properties"), std::string::npos) << log;
  EXPECT_NE(log.find("unknown option --bogus"), std::string::npos) << log;
}

TEST(RunServer, NoServiceLinkedIsAClearError) {
  set_service_factory(nullptr);
  testing::internal::CaptureStderr();
  int rc = run({"server", "--override", "listeners=PLAINTEXT://127.0.0.1:0"});
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 1);
  EXPECT_NE(log.find("no broker service"), std::string::npos) << log;
}

TEST(RunServer, PortInUseIsAStartupError) {
  Observed seen;
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  std::string port = std::to_string(ntohs(addr.sin_port));
  set_service_factory([&] { return std::make_unique<EchoService>(&seen); });
  testing::internal::CaptureStderr();
  int rc = run({"server", "--override", "listeners=PLAINTEXT://127.0.0.1:" + port});
  std::string log = testing::internal::GetCapturedStderr();
  set_service_factory(nullptr);
  ::close(fd);
  EXPECT_EQ(rc, 1);
  EXPECT_NE(log.find("cannot listen on PLAINTEXT://127.0.0.1:" + port), std::string::npos) << log;
  EXPECT_EQ(seen.starts, 0);
}

}  // namespace
}  // namespace samsa

// Real loopback sockets against FrameServer/KafkaConnection. The event loop
// runs on its own thread; the test thread is the client, with blocking
// sockets. Waits have generous timeouts that only turn a hang into a failure;
// no assertion depends on timing.

#include "io/kafka_connection.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <future>
#include <mutex>
#include <thread>

#include "io/byte_budget.h"
#include "io/frame_server.h"
#include "io/posix_file_system.h"
#include "io/posix_runtime.h"

namespace samsa {
namespace {

using namespace std::chrono_literals;

std::unique_ptr<PosixRuntime> make_runtime() {
  auto runtime = PosixRuntime::create(/*seed=*/1);
  EXPECT_TRUE(runtime.ok());
  return std::move(runtime).value();
}

// A socketpair's server end as a Stream on `runtime`, the other end raw.
StreamPtr adopt(PosixRuntime& runtime, int fd) {
  auto stream = PosixStream::adopt(runtime.loop(), UniqueFd(fd));
  EXPECT_TRUE(stream.ok());
  return std::move(stream).value();
}

class LoopThread {
 public:
  LoopThread() : loop_(make_runtime()) {}
  ~LoopThread() { stop(); }
  PosixRuntime& loop() { return *loop_; }
  void start() {
    thread_ = std::thread([this] { loop_->run(); });
  }
  // Runs fn on the loop thread and waits for it.
  void run_sync(std::function<void()> fn) {
    std::promise<void> done;
    loop_->post([&] {
      fn();
      done.set_value();
    });
    done.get_future().wait();
  }
  void stop() {
    if (!thread_.joinable()) return;
    loop_->stop();
    thread_.join();
  }

 private:
  std::unique_ptr<PosixRuntime> loop_;
  std::thread thread_;
};

// Records what the connection tells it; `handler` decides how to reply.
class TestSink : public FrameSink {
 public:
  std::function<void(InboundFrame&, ReplyFn&)> handler;

  void on_frame(InboundFrame frame, ReplyFn reply) override {
    handler(frame, reply);
    std::lock_guard lock(mu_);
    ++frames_;
    cv_.notify_all();
  }
  void on_close(uint64_t id) override {
    std::lock_guard lock(mu_);
    closed_.push_back(id);
    cv_.notify_all();
  }
  bool wait_frames(size_t n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 20s, [&] { return frames_ >= n; });
  }
  bool wait_closed(size_t n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 20s, [&] { return closed_.size() >= n; });
  }
  size_t frames() {
    std::lock_guard lock(mu_);
    return frames_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  size_t frames_ = 0;
  std::vector<uint64_t> closed_;
};

OutBuffer framed(ByteView body) {
  OutBuffer out;
  out.bytes().resize(4);
  store_be32(out.bytes().data(), uint32_t(body.size()));
  out.bytes().insert(out.bytes().end(), body.begin(), body.end());
  return out;
}

Reply echo_reply(const InboundFrame& f) { return Reply{ReplyKind::kSend, framed(*f.frame)}; }

class Client {
 public:
  explicit Client(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    EXPECT_GE(fd_, 0);
    timeval tv{20, 0};  // turns a hang into a failure
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  }
  ~Client() {
    if (fd_ >= 0) ::close(fd_);
  }
  void send_raw(ByteView data) {
    size_t off = 0;
    while (off < data.size()) {
      ssize_t n = ::send(fd_, data.data() + off, data.size() - off, MSG_NOSIGNAL);
      ASSERT_GT(n, 0);
      off += size_t(n);
    }
  }
  void send_frame(ByteView body) { send_raw(framed(body).bytes()); }
  void send_frame(std::string_view body) { send_frame(as_bytes(body)); }
  void shutdown_write() { ::shutdown(fd_, SHUT_WR); }
  bool read_exact(uint8_t* dst, size_t n) {
    size_t off = 0;
    while (off < n) {
      ssize_t r = ::recv(fd_, dst + off, n - off, 0);
      if (r <= 0) return false;
      off += size_t(r);
    }
    return true;
  }
  // The next response body (without its size), or nullopt at EOF/error.
  std::optional<Bytes> read_frame() {
    uint8_t size[4];
    if (!read_exact(size, 4)) return std::nullopt;
    Bytes body(load_be32(size));
    if (!read_exact(body.data(), body.size())) return std::nullopt;
    return body;
  }
  std::optional<std::string> read_string() {
    auto f = read_frame();
    if (!f) return std::nullopt;
    return std::string(as_string_view(*f));
  }
  // True if the server closed: EOF (or a reset) with no further data.
  bool at_eof() {
    uint8_t b;
    ssize_t r = ::recv(fd_, &b, 1, 0);
    return r == 0 || (r < 0 && errno == ECONNRESET);
  }

 private:
  int fd_ = -1;
};

struct Fixture {
  explicit Fixture(KafkaConnectionLimits limits = {}, int64_t idle_ms = 600000,
                   size_t request_cap = ByteBudget::kUnbounded, size_t response_cap = ByteBudget::kUnbounded) {
    ignore_sigpipe();
    requests = ByteBudget::create(lt.loop(), request_cap);
    responses = ByteBudget::create(lt.loop(), response_cap);
    FrameServerOptions options;
    options.limits = limits;
    options.limits.request_bytes = requests;
    options.limits.response_bytes = responses;
    options.connections_max_idle_ms = idle_ms;
    auto s = FrameServer::start(lt.loop(), options, sink);
    EXPECT_TRUE(s.ok());
    server = std::move(s).value();
    lt.start();
  }
  ~Fixture() {
    lt.run_sync([&] { server.reset(); });
    lt.stop();
  }
  uint16_t port() const { return server->port(); }
  // Polls `cond` on the loop thread, 1 ms apart, at most 20 s: turns a hang
  // into a failure, never decides the outcome.
  bool eventually(std::function<bool()> cond) {
    for (int i = 0; i < 20000; ++i) {
      bool met = false;
      lt.run_sync([&] { met = cond(); });
      if (met) return true;
      std::this_thread::sleep_for(1ms);
    }
    return false;
  }
  LoopThread lt;
  TestSink sink;
  std::shared_ptr<ByteBudget> requests;
  std::shared_ptr<ByteBudget> responses;
  std::unique_ptr<FrameServer> server;
};

TEST(KafkaConnection, EchoesSmallAndLargeFramesPipelined) {
  Fixture fx;
  fx.sink.handler = [](InboundFrame& f, ReplyFn& reply) { reply(echo_reply(f)); };
  Client c(fx.port());
  std::vector<Bytes> sent;
  for (size_t size : {0, 1, 100, 70000, 3, 1 << 20, 5}) {
    Bytes body(size);
    for (size_t i = 0; i < size; ++i) body[i] = uint8_t(i * 7 + size);
    sent.push_back(body);
  }
  for (auto& b : sent) c.send_frame(b);
  for (auto& b : sent) {
    auto got = c.read_frame();
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(*got, b);
  }
}

TEST(KafkaConnection, RepliesGoOutInRequestOrderWhenCompletedOutOfOrder) {
  // Declared before the fixture: the loop thread may still use them until
  // the fixture's destructor has synchronised with it.
  std::vector<std::pair<InboundFrame, ReplyFn>> held;  // loop thread only
  std::vector<uint64_t> sequences;
  Fixture fx;
  fx.sink.handler = [&](InboundFrame& f, ReplyFn& reply) {
    sequences.push_back(f.sequence);
    held.emplace_back(f, reply);
    if (held.size() == 5) {
      // Complete the last first: nothing may be sent before request 0.
      for (auto it = held.rbegin(); it != held.rend(); ++it) it->second(echo_reply(it->first));
    }
  };
  Client c(fx.port());
  for (int i = 0; i < 5; ++i) c.send_frame("request-" + std::to_string(i));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(c.read_string(), "request-" + std::to_string(i));
  std::vector<uint64_t> seen;
  fx.lt.run_sync([&] {
    seen = sequences;
    held.clear();  // the frames' charges go back while their budget's runtime lives
  });
  EXPECT_EQ(seen, (std::vector<uint64_t>{0, 1, 2, 3, 4}));
}

TEST(KafkaConnection, DelayedReplyFromTimer) {
  Fixture fx;
  fx.sink.handler = [&](InboundFrame& f, ReplyFn& reply) {
    if (f.sequence == 0) {
      fx.lt.loop().add_timer(10, [f, reply] { reply(echo_reply(f)); });
    } else {
      reply(echo_reply(f));
    }
  };
  Client c(fx.port());
  c.send_frame("slow");
  c.send_frame("fast");
  EXPECT_EQ(c.read_string(), "slow");
  EXPECT_EQ(c.read_string(), "fast");
}

TEST(KafkaConnection, NoReplyFreesTheSlotWithoutSending) {
  Fixture fx;
  fx.sink.handler = [](InboundFrame& f, ReplyFn& reply) {
    if (f.sequence == 0) {
      reply(Reply{ReplyKind::kNoReply, {}});
    } else {
      reply(echo_reply(f));
    }
  };
  Client c(fx.port());
  c.send_frame("acks=0");
  c.send_frame("second");
  EXPECT_EQ(c.read_string(), "second");
}

TEST(KafkaConnection, CloseReplyFlushesEarlierRepliesThenCloses) {
  std::vector<std::pair<InboundFrame, ReplyFn>> held;
  Fixture fx;
  fx.sink.handler = [&](InboundFrame& f, ReplyFn& reply) {
    held.emplace_back(f, reply);
    if (held.size() < 3) return;
    // Once all three are read (so the server's receive queue is empty and
    // its close is a clean FIN): 2 answers first, then 1 closes, then 0.
    held[2].second(echo_reply(held[2].first));
    held[1].second(Reply{ReplyKind::kClose, {}});
    held[0].second(echo_reply(held[0].first));
    held[2].second(echo_reply(held[2].first));  // after close: ignored
  };
  Client c(fx.port());
  c.send_frame("zero");
  c.send_frame("one");
  c.send_frame("two");
  EXPECT_EQ(c.read_string(), "zero");
  EXPECT_TRUE(c.at_eof());
  EXPECT_TRUE(fx.sink.wait_closed(1));
  fx.lt.run_sync([&] { held.clear(); });  // charges go back while the runtime lives
}

TEST(KafkaConnection, OversizedFrameIsLoggedAndClosed) {
  KafkaConnectionLimits limits;
  limits.max_request_bytes = 1000;
  Fixture fx(limits);
  fx.sink.handler = [](InboundFrame& f, ReplyFn& reply) { reply(echo_reply(f)); };
  Client c(fx.port());
  c.send_frame(Bytes(1000));  // exactly the limit: fine
  ASSERT_TRUE(c.read_frame().has_value());
  testing::internal::CaptureStderr();
  uint8_t prefix[4];
  store_be32(prefix, 1001);
  c.send_raw(prefix);
  EXPECT_TRUE(c.at_eof());
  EXPECT_TRUE(fx.sink.wait_closed(1));
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("WARN"), std::string::npos) << log;
  EXPECT_NE(log.find("request size 1001"), std::string::npos) << log;
  EXPECT_NE(log.find("127.0.0.1:"), std::string::npos) << log;
  EXPECT_EQ(fx.sink.frames(), 1u);
}

TEST(KafkaConnection, NegativeSizeIsClosed) {
  Fixture fx;
  fx.sink.handler = [](InboundFrame& f, ReplyFn& reply) { reply(echo_reply(f)); };
  Client c(fx.port());
  testing::internal::CaptureStderr();
  uint8_t prefix[4];
  store_be32(prefix, uint32_t(-5));
  c.send_raw(prefix);
  EXPECT_TRUE(c.at_eof());
  EXPECT_TRUE(fx.sink.wait_closed(1));
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("request size -5"), std::string::npos) << log;
  EXPECT_EQ(fx.sink.frames(), 0u);
}

TEST(KafkaConnection, TruncatedFrameThenEofClosesQuietly) {
  Fixture fx;
  fx.sink.handler = [](InboundFrame& f, ReplyFn& reply) { reply(echo_reply(f)); };
  for (size_t size : {size_t(100), size_t(200000)}) {  // chunk path and big-frame path
    Client c(fx.port());
    c.send_frame("whole");
    EXPECT_EQ(c.read_string(), "whole");
    OutBuffer partial = framed(Bytes(size));
    partial.bytes().resize(partial.bytes().size() / 2);
    testing::internal::CaptureStderr();
    c.send_raw(partial.bytes());
    c.shutdown_write();
    EXPECT_TRUE(c.at_eof());
    std::string log = testing::internal::GetCapturedStderr();
    EXPECT_EQ(log.find("WARN"), std::string::npos) << log;
  }
  EXPECT_TRUE(fx.sink.wait_closed(2));
  EXPECT_EQ(fx.sink.frames(), 2u);
}

// A temp file with known contents, shared as a FileRegion source.
std::shared_ptr<const File> make_temp_file(const Bytes& contents) {
  char path[] = "/tmp/samsa-io-test-XXXXXX";
  int fd = ::mkstemp(path);
  EXPECT_GE(fd, 0);
  ::unlink(path);
  size_t off = 0;
  while (off < contents.size()) {
    ssize_t n = ::write(fd, contents.data() + off, contents.size() - off);
    EXPECT_GT(n, 0);
    off += size_t(n);
  }
  return std::make_shared<const PosixFile>(fd, path);
}

TEST(KafkaConnection, SendfileRegionsInterleavedWithBytesArriveIntact) {
  Bytes file(6 << 20);
  for (size_t i = 0; i < file.size(); ++i) file[i] = uint8_t((i * 31) ^ (i >> 11));
  auto handle = make_temp_file(file);
  // Response body: "head" + file[10, 10+5MiB) + "mid" + (empty region) + file[3, 103) + "tail"
  Bytes expected;
  auto add = [&](std::string_view s) { expected.insert(expected.end(), s.begin(), s.end()); };
  add("head");
  expected.insert(expected.end(), file.begin() + 10, file.begin() + 10 + (5 << 20));
  add("mid");
  expected.insert(expected.end(), file.begin() + 3, file.begin() + 103);
  add("tail");

  Fixture fx;
  fx.sink.handler = [&](InboundFrame& f, ReplyFn& reply) {
    if (f.sequence == 1) {
      reply(echo_reply(f));
      return;
    }
    OutBuffer out;
    Bytes& b = out.bytes();
    b.resize(4);
    store_be32(b.data(), uint32_t(expected.size()));
    b.insert(b.end(), {'h', 'e', 'a', 'd'});
    out.append_region(FileRegion{handle, 10, 5 << 20});
    b.insert(b.end(), {'m', 'i', 'd'});
    out.append_region(FileRegion{handle, 0, 0});
    out.append_region(FileRegion{handle, 3, 100});
    b.insert(b.end(), {'t', 'a', 'i', 'l'});
    reply(Reply{ReplyKind::kSend, std::move(out)});
  };
  Client c(fx.port());
  c.send_frame("fetch");
  c.send_frame("after");
  auto got = c.read_frame();  // 5 MiB cannot go out in one call: exercises EAGAIN + EPOLLOUT
  ASSERT_TRUE(got.has_value());
  ASSERT_EQ(got->size(), expected.size());
  EXPECT_TRUE(*got == expected);
  EXPECT_EQ(c.read_string(), "after");
}

TEST(KafkaConnection, HundredConcurrentClients) {
  Fixture fx;
  fx.sink.handler = [](InboundFrame& f, ReplyFn& reply) { reply(echo_reply(f)); };
  constexpr int kClients = 100;
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < kClients; ++i) clients.push_back(std::make_unique<Client>(fx.port()));
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < kClients; ++i) clients[size_t(i)]->send_frame(fmt::format("c{}-r{}", i, round));
  }
  for (int i = 0; i < kClients; ++i) {
    for (int round = 0; round < 3; ++round) {
      EXPECT_EQ(clients[size_t(i)]->read_string(), fmt::format("c{}-r{}", i, round));
    }
  }
  size_t open = 0;
  fx.lt.run_sync([&] { open = fx.server->connection_count(); });
  EXPECT_EQ(open, size_t(kClients));
  clients.clear();
  EXPECT_TRUE(fx.sink.wait_closed(kClients));
  fx.lt.run_sync([&] { open = fx.server->connection_count(); });
  EXPECT_EQ(open, 0u);
}

TEST(KafkaConnection, IdleConnectionIsClosed) {
  Fixture fx({}, /*idle_ms=*/40);
  fx.sink.handler = [](InboundFrame& f, ReplyFn& reply) { reply(echo_reply(f)); };
  Client c(fx.port());
  c.send_frame("ping");
  EXPECT_EQ(c.read_string(), "ping");
  EXPECT_TRUE(c.at_eof());  // the server closes it once idle
  EXPECT_TRUE(fx.sink.wait_closed(1));
}

// Back-pressure, checked without a second thread: all frames are in the
// socket before the loop runs, so the first read sees all of them.
TEST(KafkaConnection, InFlightLimitPausesReadingUntilAReplyIsGiven) {
  auto runtime = make_runtime();
  PosixRuntime& loop = *runtime;
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  UniqueFd client(sv[1]);
  for (int i = 0; i < 5; ++i) {
    OutBuffer f = framed(as_bytes("r" + std::to_string(i)));
    ASSERT_EQ(::write(client.get(), f.bytes().data(), f.bytes().size()), ssize_t(f.bytes().size()));
  }
  TestSink sink;
  std::vector<ReplyFn> replies;
  std::vector<std::string> seen;
  sink.handler = [&](InboundFrame& f, ReplyFn& reply) {
    seen.push_back(std::string(as_string_view(*f.frame)));
    replies.push_back(reply);
  };
  KafkaConnectionLimits limits;
  limits.max_in_flight = 2;
  auto conn = KafkaConnection::open(loop, adopt(loop, sv[0]), 7, sink, limits, nullptr);
  auto& c = conn;
  loop.add_timer(0, [&] {
    // The readable event came first and dispatched up to the limit.
    EXPECT_EQ(seen, (std::vector<std::string>{"r0", "r1"}));
    EXPECT_TRUE(c->reading_paused());
    replies[0](Reply{ReplyKind::kNoReply, {}});
    // Freed slot: the buffered r2 goes out at once, and the limit holds again.
    EXPECT_EQ(seen, (std::vector<std::string>{"r0", "r1", "r2"}));
    EXPECT_TRUE(c->reading_paused());
    replies[1](Reply{ReplyKind::kNoReply, {}});
    replies[2](Reply{ReplyKind::kNoReply, {}});
    EXPECT_EQ(seen.size(), 5u);
    EXPECT_EQ(c->in_flight(), 2u);
    replies[3](Reply{ReplyKind::kNoReply, {}});
    replies[4](Reply{ReplyKind::kNoReply, {}});
    EXPECT_FALSE(c->reading_paused());
    c->close();
    replies[4](Reply{ReplyKind::kNoReply, {}});  // after close: harmless
    loop.stop();
  });
  loop.run();
  EXPECT_TRUE(c->closed());
  EXPECT_TRUE(sink.wait_closed(1));
}

// A client that does not read its responses stops the server reading its
// requests; once it reads, the held-back request is served.
TEST(KafkaConnection, UnreadResponsesPauseReadingUntilDrained) {
  auto runtime = make_runtime();
  PosixRuntime& loop = *runtime;
  ignore_sigpipe();
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  UniqueFd client(sv[1]);
  for (const char* body : {"big", "small"}) {
    OutBuffer f = framed(as_bytes(body));
    ASSERT_EQ(::write(client.get(), f.bytes().data(), f.bytes().size()), ssize_t(f.bytes().size()));
  }
  constexpr size_t kBig = 8 << 20;  // far more than a socket buffer holds
  TestSink sink;
  std::vector<std::string> seen;
  sink.handler = [&](InboundFrame& f, ReplyFn& reply) {
    seen.push_back(std::string(as_string_view(*f.frame)));
    if (seen.size() == 1) {
      reply(Reply{ReplyKind::kSend, framed(Bytes(kBig, 7))});
    } else {
      reply(echo_reply(f));
    }
  };
  KafkaConnectionLimits limits;
  limits.max_queued_write_bytes = 1000;
  auto conn = KafkaConnection::open(loop, adopt(loop, sv[0]), 8, sink, limits, nullptr);
  std::thread reader;
  std::optional<Bytes> first, second;
  loop.add_timer(0, [&] {
    EXPECT_EQ(seen, (std::vector<std::string>{"big"}));
    EXPECT_TRUE(conn->reading_paused());
    reader = std::thread([&] {
      auto read_frame = [&]() -> std::optional<Bytes> {
        uint8_t size[4];
        auto read_exact = [&](uint8_t* dst, size_t n) {
          for (size_t off = 0; off < n;) {
            ssize_t r = ::read(client.get(), dst + off, n - off);
            if (r <= 0) return false;
            off += size_t(r);
          }
          return true;
        };
        if (!read_exact(size, 4)) return std::nullopt;
        Bytes body(load_be32(size));
        if (!read_exact(body.data(), body.size())) return std::nullopt;
        return body;
      };
      first = read_frame();
      second = read_frame();
      loop.post([&] { loop.stop(); });
    });
  });
  loop.run();
  reader.join();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->size(), kBig);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(std::string(as_string_view(*second)), "small");
  EXPECT_EQ(seen, (std::vector<std::string>{"big", "small"}));
  EXPECT_FALSE(conn->reading_paused());
  conn->close();
}

TEST(KafkaConnection, LargeFrameBufferIsReusedOnlyOnceTheSinkReleasedIt) {
  // The sink keeps the first large frame, drops the second and third; the
  // kept frame must stay intact, and the third reuses the second's buffer.
  std::vector<std::shared_ptr<Bytes>> kept;
  std::vector<const uint8_t*> buffers;
  Fixture fx;
  fx.sink.handler = [&](InboundFrame& f, ReplyFn& reply) {
    buffers.push_back(f.frame->data());
    if (kept.empty()) kept.push_back(f.frame);
    reply(echo_reply(f));
  };
  Client c(fx.port());
  std::vector<Bytes> sent;
  for (size_t size : {size_t(300000), size_t(200000), size_t(250000)}) {
    Bytes body(size);
    for (size_t i = 0; i < size; ++i) body[i] = uint8_t(i * 13 + size);
    sent.push_back(body);
    c.send_frame(body);
    auto got = c.read_frame();  // one at a time: each is released before the next arrives
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(*got, body);
  }
  fx.lt.run_sync([&] {
    ASSERT_EQ(buffers.size(), 3u);
    EXPECT_NE(buffers[1], buffers[0]);  // the first is still held by the sink
    EXPECT_EQ(buffers[2], buffers[1]);  // released, so reused
    ASSERT_EQ(kept.size(), 1u);
    EXPECT_EQ(*kept[0], sent[0]);
    kept.clear();
  });
}

// Item 2 of issue 10: a size prefix alone commits nothing. A frame that
// claims the largest allowed size (100 MiB) but brings 4 KiB holds 64 KiB;
// as bytes arrive, what is committed stays within 1 MiB of what arrived.
TEST(KafkaConnection, LargeFrameCommitsMemoryAsItsBytesArriveNotFromItsSizePrefix) {
  auto runtime = make_runtime();
  PosixRuntime& loop = *runtime;
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  UniqueFd client(sv[1]);
  int server_fd = sv[0];
  constexpr size_t kClaimed = 104857600;
  constexpr size_t kFirst = 4096;
  constexpr size_t kMore = 1 << 20;
  Bytes start(4 + kFirst, 1);
  store_be32(start.data(), uint32_t(kClaimed));
  ASSERT_EQ(::write(client.get(), start.data(), start.size()), ssize_t(start.size()));
  TestSink sink;
  sink.handler = [](InboundFrame&, ReplyFn&) { ADD_FAILURE() << "the frame is not complete"; };
  KafkaConnectionLimits limits;
  limits.request_bytes = ByteBudget::create(loop);
  auto& requests = *limits.request_bytes;
  auto conn = KafkaConnection::open(loop, adopt(loop, sv[0]), 9, sink, limits, nullptr);
  std::thread writer;
  std::atomic<bool> written{false};
  auto unread = [&] {
    int n = 0;
    ::ioctl(server_fd, FIONREAD, &n);
    return n;
  };
  int polls = 0;
  std::function<void()> poll_until_read = [&] {
    if (!(written && unread() == 0) && ++polls < 20000) {
      loop.add_timer(1, poll_until_read);
      return;
    }
    size_t received = kFirst + kMore;
    EXPECT_GE(requests.used(), received);
    EXPECT_LE(requests.used(), received + (1 << 20));
    conn->close();
    EXPECT_EQ(requests.used(), 0u);
    loop.stop();
  };
  loop.add_timer(0, [&] {
    EXPECT_EQ(unread(), 0);
    EXPECT_EQ(requests.used(), 64u * 1024);
    writer = std::thread([&] {
      Bytes more(kMore, 2);
      for (size_t off = 0; off < more.size();) {
        ssize_t n = ::write(client.get(), more.data() + off, more.size() - off);
        ASSERT_GT(n, 0);
        off += size_t(n);
      }
      written = true;
    });
    poll_until_read();
  });
  loop.run();
  writer.join();
  EXPECT_LT(polls, 20000);
}

TEST(KafkaConnection, LargeFramesGrowingInManyStepsArriveIntact) {
  Fixture fx;
  fx.sink.handler = [](InboundFrame& f, ReplyFn& reply) { reply(echo_reply(f)); };
  Client c(fx.port());
  for (size_t size : {size_t(5 << 20) + 3, size_t(3 << 20), size_t(100000)}) {
    Bytes body(size);
    for (size_t i = 0; i < size; ++i) body[i] = uint8_t(i * 31 + (i >> 16));
    std::thread sender([&] { c.send_frame(body); });
    auto got = c.read_frame();
    sender.join();
    ASSERT_TRUE(got.has_value());
    EXPECT_TRUE(*got == body);
  }
  EXPECT_TRUE(fx.eventually([&] { return fx.requests->used() == 0; }));
}

// queued.max.request.bytes: frames held by the sink keep their bytes
// charged; at the cap the connection stops reading until some are released.
TEST(KafkaConnection, RequestBudgetPausesReadingUntilTheSinkReleasesFrames) {
  Fixture fx({}, 600000, /*request_cap=*/100000);
  std::vector<std::shared_ptr<Bytes>> kept;
  fx.sink.handler = [&](InboundFrame& f, ReplyFn& reply) {
    kept.push_back(f.frame);
    reply(Reply{ReplyKind::kNoReply, {}});
  };
  Client c(fx.port());
  for (int i = 0; i < 3; ++i) c.send_frame(Bytes(50000, uint8_t(i)));
  ASSERT_TRUE(fx.sink.wait_frames(2));
  // Reading stopped at the cap: the third frame waits for budget.
  EXPECT_TRUE(fx.eventually([&] { return fx.requests->waiters() == 1; }));
  fx.lt.run_sync([&] {
    EXPECT_EQ(fx.sink.frames(), 2u);
    EXPECT_EQ(fx.requests->used(), 100000u);
    kept.erase(kept.begin());  // the sink lets go of one frame
  });
  ASSERT_TRUE(fx.sink.wait_frames(3));
  fx.lt.run_sync([&] {
    EXPECT_EQ(fx.requests->used(), 100000u);
    ASSERT_EQ(kept.size(), 2u);
    EXPECT_EQ(*kept[1], Bytes(50000, 2));
    kept.clear();
    EXPECT_EQ(fx.requests->used(), 0u);
  });
}

// Frames larger than the whole budget, read at the same time on two
// connections: each holds part of a frame when the budget runs out, so
// without the overdraft neither could finish and nothing would be released.
TEST(KafkaConnection, PartlyReadFramesCannotDeadlockTheRequestBudget) {
  Fixture fx({}, 600000, /*request_cap=*/100000);
  fx.sink.handler = [](InboundFrame& f, ReplyFn& reply) {
    Bytes size(4);
    store_be32(size.data(), uint32_t(f.frame->size()));
    reply(Reply{ReplyKind::kSend, framed(size)});
  };
  Client a(fx.port());
  Client b(fx.port());
  Bytes body(400000, 5);
  std::thread send_a([&] { a.send_frame(body); });
  std::thread send_b([&] { b.send_frame(body); });
  auto got_a = a.read_frame();
  auto got_b = b.read_frame();
  send_a.join();
  send_b.join();
  ASSERT_TRUE(got_a.has_value());
  ASSERT_TRUE(got_b.has_value());
  EXPECT_EQ(load_be32(got_a->data()), 400000u);
  EXPECT_EQ(load_be32(got_b->data()), 400000u);
  EXPECT_TRUE(fx.eventually([&] { return fx.requests->used() == 0 && fx.requests->overdraft_holder() == 0; }));
}

// Item 6 of issue 10: while the shared response memory is exhausted, a
// connection whose responses are not being read stops being read; another
// connection keeps being answered; closing gives the bytes back.
TEST(KafkaConnection, ResponseBudgetMutesOnlyConnectionsWhoseResponsesAreNotRead) {
  KafkaConnectionLimits limits;
  limits.max_queued_write_bytes = 256 << 20;  // the per-connection cap is not what stops it
  Fixture fx(limits, 600000, ByteBudget::kUnbounded, /*response_cap=*/1 << 20);
  constexpr size_t kBig = 16 << 20;  // far more than socket buffers hold
  std::atomic<int> big_requests{0};
  fx.sink.handler = [&](InboundFrame& f, ReplyFn& reply) {
    if (as_string_view(*f.frame) == "big") {
      ++big_requests;
      reply(Reply{ReplyKind::kSend, framed(Bytes(kBig, 7))});
    } else {
      reply(echo_reply(f));
    }
  };
  auto a = std::make_unique<Client>(fx.port());
  for (int i = 0; i < 3; ++i) a->send_frame("big");  // and never reads
  ASSERT_TRUE(fx.sink.wait_frames(1));
  EXPECT_TRUE(fx.eventually([&] { return fx.responses->exhausted(); }));
  Client b(fx.port());
  for (int i = 0; i < 3; ++i) {
    b.send_frame("ping");
    EXPECT_EQ(b.read_string(), "ping");
  }
  EXPECT_EQ(big_requests.load(), 1);
  a.reset();
  EXPECT_TRUE(fx.eventually([&] { return fx.responses->used() == 0; }));
}

}  // namespace
}  // namespace samsa

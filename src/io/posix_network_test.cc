// PosixNetwork over real loopback sockets, one thread: each test runs the
// loop until its condition is met. A 10 s guard timer turns a hang into a
// failure; no assertion depends on timing.

#include "io/posix_network.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace samsa {
namespace {

constexpr int64_t kGuardMs = 10'000;

// Runs the loop until stop(); fails the test if the guard fires first.
class Loop {
 public:
  Loop() : loop_(std::move(EventLoop::create()).value()), network_(*loop_) { ignore_sigpipe(); }
  EventLoop& loop() { return *loop_; }
  PosixNetwork& network() { return network_; }
  void run() {
    TimerId guard = loop_->add_timer(kGuardMs, [this] {
      ADD_FAILURE() << "the condition was not met within " << kGuardMs << " ms";
      loop_->stop();
    });
    loop_->run();
    loop_->cancel_timer(guard);
  }
  // Ends the current run() (each stop() ends one).
  void stop() { loop_->stop(); }

 private:
  std::unique_ptr<EventLoop> loop_;
  PosixNetwork network_;
};

// Collects what a stream reports; `on_ready` decides what to do with it.
struct Handler : Stream::Handler {
  std::function<void(bool, bool, bool)> on_ready;
  void on_stream_ready(bool readable, bool writable, bool hangup) override { on_ready(readable, writable, hangup); }
};

// A File over a descriptor of a temporary file; `with_descriptor` false
// hides the descriptor (as the simulated disk has none).
class TempFile final : public File {
 public:
  TempFile(std::string contents, bool with_descriptor) : with_descriptor_(with_descriptor) {
    path_ = (std::filesystem::temp_directory_path() / "samsa-posix-network-XXXXXX").string();
    fd_ = ::mkstemp(path_.data());
    EXPECT_GE(fd_, 0);
    EXPECT_EQ(::write(fd_, contents.data(), contents.size()), ssize_t(contents.size()));
  }
  ~TempFile() override {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  const std::string& path() const override { return path_; }
  Status write_at(ByteView, int64_t) override { return Error(ErrorKind::kUnsupported, "test file"); }
  Result<size_t> read_at(uint8_t* out, size_t size, int64_t position) const override {
    ++reads;
    ssize_t n = ::pread(fd_, out, size, position);
    if (n < 0) return errno_error("pread", errno);
    return size_t(n);
  }
  Result<int64_t> size() const override { return Error(ErrorKind::kUnsupported, "test file"); }
  Status truncate(int64_t) override { return Error(ErrorKind::kUnsupported, "test file"); }
  Status allocate(int64_t) override { return Error(ErrorKind::kUnsupported, "test file"); }
  Status sync() override { return ok_status(); }
  Result<bool> has_hole(int64_t) const override { return false; }
  Result<std::unique_ptr<FileMapping>> map(size_t) const override {
    return Error(ErrorKind::kUnsupported, "test file");
  }
  int native_handle() const override { return with_descriptor_ ? fd_ : -1; }

  mutable int reads = 0;

 private:
  std::string path_;
  int fd_ = -1;
  bool with_descriptor_;
};

// A listener, the stream it accepted and the stream that dialed it.
struct Pair {
  std::unique_ptr<Listener> listener;
  StreamPtr server;
  StreamPtr client;
};

Pair connected_pair(Loop& l) {
  Pair p;
  auto listener = l.network().listen(ListenOptions{}, [&](StreamPtr s) {
    p.server = std::move(s);
    if (p.client) l.stop();
  });
  EXPECT_TRUE(listener.ok()) << listener.error().to_string();
  p.listener = std::move(listener).value();
  l.network().connect("127.0.0.1", p.listener->port(), 5000, [&](Result<StreamPtr> s) {
    ASSERT_TRUE(s.ok()) << s.error().to_string();
    p.client = std::move(s).value();
    if (p.server) l.stop();
  });
  l.run();
  return p;
}

// Reads from `s` until `n` bytes or end of stream, running the loop.
std::string read_all(Loop& l, Stream& s, size_t n) {
  std::string got;
  Handler h;
  h.on_ready = [&](bool, bool, bool) {
    for (;;) {
      uint8_t buf[4096];
      IoResult r = s.read(buf, sizeof buf);
      if (r.status == IoResult::Status::kDone) {
        got.append(reinterpret_cast<char*>(buf), r.bytes);
        if (got.size() >= n) break;
        continue;
      }
      if (r.status == IoResult::Status::kWouldBlock) return;
      break;  // end of stream or error
    }
    s.set_interest(false, false);
    l.stop();
  };
  s.set_handler(&h);
  s.set_interest(true, false);
  l.run();
  s.set_handler(nullptr);
  return got;
}

// A port that refuses: bound (so nobody else takes it) but not listening.
struct ClosedPort {
  ClosedPort() {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(addr.sin_port);
  }
  ~ClosedPort() { ::close(fd); }
  int fd;
  uint16_t port;
};

TEST(PosixNetwork, ConnectToAListenerGivesTwoEndsThatTalk) {
  Loop l;
  Pair p = connected_pair(l);
  ASSERT_TRUE(p.server && p.client);
  EXPECT_EQ(p.client->peer_address(), p.listener->address());
  EXPECT_EQ(p.server->peer_address(), p.client->local_address());
  EXPECT_EQ(p.server->local_address(), p.listener->address());

  // Gathered pieces arrive in order, as one byte stream.
  std::string a = "hello, ", b = "gathered ", c = "world";
  ByteView pieces[] = {as_bytes(a), as_bytes(b), as_bytes(c)};
  IoResult w = p.client->write(pieces, 3);
  ASSERT_EQ(w.status, IoResult::Status::kDone);
  EXPECT_EQ(w.bytes, a.size() + b.size() + c.size());
  EXPECT_EQ(read_all(l, *p.server, w.bytes), "hello, gathered world");
}

TEST(PosixNetwork, SendFileSendsTheRangeWithOrWithoutADescriptor) {
  for (bool with_descriptor : {true, false}) {
    Loop l;
    Pair p = connected_pair(l);
    TempFile file("0123456789abcdef", with_descriptor);
    IoResult r = p.server->send_file(file, 4, 8);
    ASSERT_EQ(r.status, IoResult::Status::kDone);
    ASSERT_EQ(r.bytes, 8u);
    EXPECT_EQ(read_all(l, *p.client, 8), "456789ab") << "with_descriptor " << with_descriptor;
    EXPECT_EQ(file.reads, with_descriptor ? 0 : 1);  // sendfile, or read_at + send
    // Past the end of the file: the range cannot be sent.
    EXPECT_EQ(p.server->send_file(file, 16, 4).status, IoResult::Status::kEof);
  }
}

TEST(PosixNetwork, PeerCloseIsEndOfStreamThenWritesFail) {
  Loop l;
  Pair p = connected_pair(l);
  p.client.reset();  // closes
  EXPECT_EQ(read_all(l, *p.server, 1), "");
  uint8_t b;
  EXPECT_EQ(p.server->read(&b, 1).status, IoResult::Status::kEof);
  // The peer's socket is gone: it answers with a reset, then writes fail.
  std::string data(1000, 'x');
  ByteView piece = as_bytes(data);
  IoResult w{};
  for (int i = 0; i < 100; ++i) {
    w = p.server->write(&piece, 1);
    if (w.status == IoResult::Status::kError) break;
  }
  ASSERT_EQ(w.status, IoResult::Status::kError);
  EXPECT_TRUE(w.err == EPIPE || w.err == ECONNRESET) << w.err;
}

TEST(PosixNetwork, HangupIsReportedWithoutInterest) {
  Loop l;
  Pair p = connected_pair(l);
  // A reset (SO_LINGER 0) makes the server's socket hang up.
  std::string data = "unread";
  ByteView piece = as_bytes(data);
  ASSERT_EQ(p.server->write(&piece, 1).status, IoResult::Status::kDone);
  std::optional<bool> hung_up;
  Handler h;
  h.on_ready = [&](bool, bool, bool hangup) {
    hung_up = hangup;
    p.server->set_handler(nullptr);
    l.stop();
  };
  p.server->set_handler(&h);
  p.server->set_interest(false, false);
  p.client->close();  // unread data in its receive queue: close sends a reset
  l.run();
  ASSERT_TRUE(hung_up.has_value());
  EXPECT_TRUE(*hung_up);
}

TEST(PosixNetwork, ConnectToAPortNobodyListensOnIsRefused) {
  Loop l;
  ClosedPort closed;
  std::optional<Result<StreamPtr>> outcome;
  l.network().connect("127.0.0.1", closed.port, 5000, [&](Result<StreamPtr> s) {
    outcome.emplace(std::move(s));
    l.stop();
  });
  EXPECT_FALSE(outcome.has_value());  // never inside connect()
  l.run();
  ASSERT_TRUE(outcome.has_value());
  ASSERT_FALSE(outcome->ok());
  EXPECT_EQ(outcome->error().kind(), ErrorKind::kIo);
  EXPECT_NE(outcome->error().message().find("refused"), std::string::npos) << outcome->error().to_string();
  EXPECT_EQ(l.network().pending_connects(), 0u);
}

TEST(PosixNetwork, UnresolvableHostFailsLater) {
  Loop l;
  std::optional<Result<StreamPtr>> outcome;
  l.network().connect("no such host!", 9092, 5000, [&](Result<StreamPtr> s) {
    outcome.emplace(std::move(s));
    l.stop();
  });
  EXPECT_FALSE(outcome.has_value());
  l.run();
  ASSERT_TRUE(outcome.has_value());
  EXPECT_FALSE(outcome->ok());
}

// A listener with a backlog of 0 that never accepts: the first connection
// fills its accept queue; Linux drops the SYNs of the next ones (the client
// would retransmit after 1 s), so their connect times out.
TEST(PosixNetwork, ConnectTimesOutWhenTheListenerCannotTakeMore) {
  Loop l;
  UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener.get(), 0), 0);
  socklen_t len = sizeof addr;
  ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&addr), &len);
  uint16_t port = ntohs(addr.sin_port);

  std::vector<StreamPtr> connected;
  std::optional<Error> timed_out;
  std::function<void()> dial = [&] {
    l.network().connect("127.0.0.1", port, 100, [&](Result<StreamPtr> s) {
      if (s.ok()) {
        connected.push_back(std::move(s).value());
        if (connected.size() < 4) return dial();  // bounded: the queue holds one or two
      } else {
        timed_out = s.error();
      }
      l.stop();
    });
  };
  dial();
  l.run();
  ASSERT_TRUE(timed_out.has_value()) << connected.size() << " connects all succeeded";
  EXPECT_EQ(timed_out->kind(), ErrorKind::kTimedOut) << timed_out->to_string();
  EXPECT_GE(connected.size(), 1u);
  EXPECT_EQ(l.network().pending_connects(), 0u);
}

// A cancelled dial never calls back; one that connected meanwhile is closed
// (the accepted end sees end of stream). Outcomes run in order, so the dial
// started after it calling back proves the cancelled one's turn has passed.
TEST(PosixNetwork, CancelledConnectNeverCallsBackAndClosesItsStream) {
  Loop l;
  StreamPtr accepted;
  auto listener = l.network().listen(ListenOptions{}, [&](StreamPtr s) {
    if (!accepted) accepted = std::move(s);
  });
  ASSERT_TRUE(listener.ok());
  bool cancelled_called = false;
  ConnectId id = l.network().connect("127.0.0.1", (*listener)->port(), 5000,
                                     [&](Result<StreamPtr>) { cancelled_called = true; });
  l.network().cancel_connect(id);
  l.network().cancel_connect(id);  // a second time: no-op
  EXPECT_EQ(l.network().pending_connects(), 0u);
  std::string got = "unset";
  while (!accepted) {
    // Accepting it takes a loop round: a timer of 0 ms gives one.
    l.loop().add_timer(0, [&] { l.stop(); });
    l.run();
  }
  got = read_all(l, *accepted, 1);
  EXPECT_EQ(got, "");  // end of stream: the dialing socket was closed

  // A refused dial, cancelled before its (posted) outcome runs.
  ClosedPort closed;
  bool refused_called = false;
  ConnectId refused = l.network().connect("127.0.0.1", closed.port, 5000, [&](Result<StreamPtr>) {
    refused_called = true;
  });
  l.network().cancel_connect(refused);
  bool later_called = false;
  l.network().connect("127.0.0.1", closed.port, 5000, [&](Result<StreamPtr> s) {
    later_called = true;
    EXPECT_FALSE(s.ok());
    l.stop();
  });
  l.run();
  EXPECT_TRUE(later_called);
  EXPECT_FALSE(refused_called);
  EXPECT_FALSE(cancelled_called);
}

}  // namespace
}  // namespace samsa

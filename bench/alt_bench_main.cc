// samsa-alt-bench: what `make bench` measures besides Samsa itself, on plain
// sockets and without client libraries (so client overhead is small and
// alike for each):
//   loopback                 raw TCP throughput over 127.0.0.1 (the wire
//                            ceiling for fetch)
//   wakeup                   how late a thread wakes from a 1 ms sleep
//                            (scheduler noise: the floor of latency tails)
//   pingpong-sendfile/-copy  what a fetch response of --record-size bytes
//                            costs the client, by how the server sends it
//                            (fetch_pingpong.cc)
//   nats-produce/-consume    NATS JetStream: publish with acks to a file
//                            stream, read back through a pull consumer
//   redis-produce/-consume   Redis Streams: pipelined XADD, XREAD batches
// Options: --port N --records N --record-size BYTES --window N --name S.
// Prints one JSON line like `samsa bench --json`.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

#include "alt_support.h"

namespace samsa::altbench {

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string payload(size_t size, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(size, 'A');
  for (char& c : s) c = char('A' + rng() % 26);
  return s;
}

void print_json(const Result& r) {
  double rps = r.seconds > 0 ? double(r.records) / r.seconds : 0;
  double mbps = r.seconds > 0 ? double(r.bytes) / r.seconds / 1e6 : 0;
  std::printf("{\"mode\":\"%s\",\"records\":%llu,\"bytes\":%llu,\"seconds\":%.6f,\"records_per_sec\":%.1f,"
              "\"mb_per_sec\":%.3f,\"errors\":%d",
              r.mode.c_str(), (unsigned long long)r.records, (unsigned long long)r.bytes, r.seconds, rps, mbps,
              r.error.empty() ? 0 : 1);
  if (!r.error.empty()) std::printf(",\"first_error\":\"%s\"", r.error.c_str());
  if (!r.latencies_ns.empty()) {
    std::vector<int64_t> l = r.latencies_ns;
    std::sort(l.begin(), l.end());
    auto at = [&](double q) { return double(l[std::min(l.size() - 1, size_t(q * double(l.size())))]) / 1e6; };
    std::printf(",\"latency\":{\"kind\":\"%s\",", r.mode == "wakeup" ? "wakeup" : "ack");
    std::printf("\"samples\":%zu,\"p50_ms\":%.4f,\"p99_ms\":%.4f,\"p99.9_ms\":%.4f,"
                "\"max_ms\":%.4f}",
                l.size(), at(0.5), at(0.99), at(0.999), double(l.back()) / 1e6);
  }
  std::printf("}\n");
  std::fflush(stdout);
}

Conn::Conn(const std::string& host, int port) : buf_(1 << 22) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(uint16_t(port));
  inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    std::fprintf(stderr, "samsa-alt-bench: connect %s:%d: %s\n", host.c_str(), port, std::strerror(errno));
    std::exit(1);
  }
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

Conn::~Conn() { ::close(fd_); }

void Conn::write_all(std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::fprintf(stderr, "samsa-alt-bench: send: %s\n", std::strerror(errno));
      std::exit(1);
    }
    data.remove_prefix(size_t(n));
  }
}

bool Conn::fill() {
  if (start_ == end_) start_ = end_ = 0;
  if (end_ == buf_.size()) {
    if (start_ > 0) {
      std::memmove(buf_.data(), buf_.data() + start_, end_ - start_);
      end_ -= start_;
      start_ = 0;
    } else {
      buf_.resize(buf_.size() * 2);
    }
  }
  for (;;) {
    ssize_t n = ::recv(fd_, buf_.data() + end_, buf_.size() - end_, 0);
    if (n > 0) {
      end_ += size_t(n);
      return true;
    }
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
}

// Raw TCP over loopback: one thread writes --records x --record-size bytes
// in 1 MiB sends, the other reads them in 1 MiB recvs.
int listen_on_loopback(int& port, const char* mode) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 1) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::fprintf(stderr, "samsa-alt-bench: %s: listen on 127.0.0.1: %s\n", mode, std::strerror(errno));
    if (fd >= 0) ::close(fd);
    return -1;
  }
  port = ntohs(addr.sin_port);
  return fd;
}

int run_loopback(const Args& args) {
  int port = 0;
  int lfd = listen_on_loopback(port, "loopback");
  if (lfd < 0) return 1;
  const uint64_t total = uint64_t(args.records) * uint64_t(args.record_size);
  std::thread writer([&] {
    Conn c("127.0.0.1", port);
    std::string chunk = payload(1 << 20, 1);
    for (uint64_t sent = 0; sent < total;) {
      size_t n = size_t(std::min<uint64_t>(chunk.size(), total - sent));
      c.write_all(std::string_view(chunk.data(), n));
      sent += n;
    }
  });
  int fd = ::accept(lfd, nullptr, nullptr);
  std::vector<char> buf(1 << 20);
  uint64_t got = 0;
  int64_t start = now_ns();
  while (got < total) {
    ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
    if (n <= 0) break;
    got += uint64_t(n);
  }
  Result r;
  r.mode = "loopback";
  r.seconds = double(now_ns() - start) / 1e9;
  r.bytes = got;
  r.records = got / uint64_t(args.record_size);
  writer.join();
  ::close(fd);
  ::close(lfd);
  print_json(r);
  return got == total ? 0 : 1;
}

// Scheduler noise: a thread asks to wake every 1 ms (absolute deadlines)
// for --records wake-ups and records how late each wake-up is. Its tail is
// the floor under any end-to-end latency tail measured at the same time.
int run_wakeup(const Args& args) {
  Result r;
  r.mode = "wakeup";
  const int64_t period = 1'000'000;
  int64_t start = now_ns();
  for (int64_t i = 1; i <= args.records; ++i) {
    int64_t deadline = start + i * period;
    timespec ts{time_t(deadline / 1'000'000'000), long(deadline % 1'000'000'000)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
    r.latencies_ns.push_back(now_ns() - deadline);
  }
  r.records = uint64_t(args.records);
  r.seconds = double(now_ns() - start) / 1e9;
  print_json(r);
  return 0;
}

}  // namespace samsa::altbench

int main(int argc, char** argv) {
  using namespace samsa::altbench;
  if (argc < 2) {
    std::fprintf(stderr, "usage: samsa-alt-bench MODE [--port N] [--records N] [--record-size B] [--window N]\n");
    return 2;
  }
  std::string mode = argv[1];
  Args args;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    const char* v = argv[i + 1];
    if (flag == "--port") args.port = std::atoi(v);
    else if (flag == "--records") args.records = std::atoll(v);
    else if (flag == "--record-size") args.record_size = std::max(16LL, std::atoll(v));
    else if (flag == "--window") args.window = std::max(1LL, std::atoll(v));
    else if (flag == "--name") args.name = v;
    else if (flag == "--host") args.host = v;
    else {
      std::fprintf(stderr, "samsa-alt-bench: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (mode == "loopback") return run_loopback(args);
  if (mode == "wakeup") return run_wakeup(args);
  if (mode.rfind("pingpong-", 0) == 0) return run_fetch_pingpong(mode, args);
  if (mode.rfind("nats-", 0) == 0) return run_nats(mode, args);
  if (mode.rfind("redis-", 0) == 0) return run_redis(mode, args);
  std::fprintf(stderr, "samsa-alt-bench: unknown mode %s\n", mode.c_str());
  return 2;
}

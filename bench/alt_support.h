#pragma once
// Shared by samsa-alt-bench's modes: a blocking TCP client socket with a
// receive buffer, clocks, payloads and the JSON result line (the same
// fields as `samsa bench --json`, so run_suite.py reads both alike).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace samsa::altbench {

int64_t now_ns();

struct Args {
  std::string host = "127.0.0.1";
  int port = 0;
  int64_t records = 1'000'000;
  int64_t record_size = 100;
  int64_t window = 1000;  // requests in flight
  std::string name = "bench";
};

struct Result {
  std::string mode;
  uint64_t records = 0;
  uint64_t bytes = 0;
  double seconds = 0;
  std::vector<int64_t> latencies_ns;  // ack latencies, when measured
  std::string error;
};
void print_json(const Result& r);

// Random upper-case letters, like the Kafka benchmarks' payloads.
std::string payload(size_t size, uint64_t seed);

class Conn {
 public:
  // Connects (blocking, TCP_NODELAY); exits the process on failure.
  Conn(const std::string& host, int port);
  ~Conn();
  void write_all(std::string_view data);
  // Reads more bytes into the buffer (blocking); false at end of stream.
  bool fill();
  // Unparsed received bytes; consume(n) drops n of them.
  std::string_view pending() const { return std::string_view(buf_.data() + start_, end_ - start_); }
  void consume(size_t n) { start_ += n; }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  std::vector<char> buf_;
  size_t start_ = 0;
  size_t end_ = 0;
};

// A listening socket on 127.0.0.1, on a port the kernel chose (stored in
// `port`); -1 after printing why, naming `mode`.
int listen_on_loopback(int& port, const char* mode);

int run_nats(const std::string& mode, const Args& args);
int run_redis(const std::string& mode, const Args& args);
int run_loopback(const Args& args);
int run_wakeup(const Args& args);
int run_fetch_pingpong(const std::string& mode, const Args& args);

}  // namespace samsa::altbench

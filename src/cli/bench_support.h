#pragma once
// Pieces shared by the `samsa bench` modes (bench_command.cc: produce;
// bench_consume.cc: consume and e2e): clocks, the payload pool, topic
// creation, the progress line and the result printers (text and --json).

#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "cli/bench_histogram.h"
#include "cli/kafka_client.h"

namespace samsa::cli::bench {

int64_t now_ns();       // CLOCK_MONOTONIC
int64_t wall_now_ns();  // CLOCK_REALTIME: record create times
// Sleeps until the monotonic clock reaches `deadline_ns`. Never spins: on
// a small machine a spinning load generator steals the CPU it measures.
// Callers pace by sending everything that is due when they wake.
void sleep_until(int64_t deadline_ns);

// Record values like kafka-producer-perf-test's: random upper-case letters,
// so compression sees data that is neither trivial nor incompressible.
// value(i) is a window into one pool, different for consecutive i; the
// pool lives as long as the object (librdkafka may reference it, no copy).
class PayloadPool {
 public:
  PayloadPool(size_t record_size, uint64_t seed);
  char* value(uint64_t i);
  size_t record_size() const { return record_size_; }

 private:
  size_t record_size_;
  std::vector<char> pool_;
};

// Creates `topic` with `partitions` if it does not exist (an existing topic
// is used as it is; its partition count is returned).
Result<int> ensure_topic(const ClientOptions& client, const std::string& topic, int partitions);

// Accumulated figures of a run; printed as text or JSON.
struct Figures {
  std::string mode;
  uint64_t records = 0;
  uint64_t bytes = 0;  // record values only, like Kafka's perf tools
  uint64_t errors = 0;
  double seconds = 0;
  std::string first_error;
  // Config echo, printed in the header and under "config" in JSON.
  std::vector<std::pair<std::string, std::string>> config;
  bool has_latency = false;
  std::string latency_name;  // "ack" or "e2e"
  LatencyHistogram latency;
  double target_rate = 0;  // records/s asked for; 0 = unlimited
};

void print_text(const Figures& f);
void print_json(const Figures& f);

// A progress line on stderr every `interval_s` seconds (0 = never).
class Progress {
 public:
  Progress(std::string mode, double interval_s);
  // Call often; prints when the interval has passed and then returns true
  // (the caller may reset its window).
  bool tick(uint64_t records, uint64_t bytes, const LatencyHistogram* window);

 private:
  std::string mode_;
  int64_t interval_ns_;
  int64_t start_ns_;
  int64_t last_ns_;
  uint64_t last_records_ = 0;
  uint64_t last_bytes_ = 0;
};

// Whether a --compression value is one librdkafka knows.
bool valid_compression(const std::string& c);

}  // namespace samsa::cli::bench

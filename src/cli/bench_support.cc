#include "cli/bench_support.h"

#include <time.h>

#include <cerrno>
#include <cstdio>
#include <random>

#include "cli/json_writer.h"

namespace samsa::cli::bench {

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

int64_t wall_now_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void sleep_until(int64_t deadline_ns) {
  timespec ts{time_t(deadline_ns / 1'000'000'000), long(deadline_ns % 1'000'000'000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

PayloadPool::PayloadPool(size_t record_size, uint64_t seed) : record_size_(record_size) {
  // 1 MiB plus one record: windows at many offsets, each a full record.
  pool_.resize((size_t(1) << 20) + record_size + 8);
  std::mt19937_64 rng(seed);
  for (char& c : pool_) c = char('A' + rng() % 26);
}

char* PayloadPool::value(uint64_t i) {
  // A stride that is prime to the pool size visits many offsets.
  size_t span = pool_.size() - record_size_ - 8;
  return pool_.data() + (i * 7919) % span;
}

Result<int> ensure_topic(const ClientOptions& client, const std::string& topic, int partitions) {
  ASSIGN_OR_RETURN(ConfPtr conf, make_conf(client, {}));
  ASSIGN_OR_RETURN(HandlePtr rk, make_client(RD_KAFKA_PRODUCER, std::move(conf)));
  QueuePtr queue(rd_kafka_queue_new(rk.get()));
  char errstr[512];
  rd_kafka_NewTopic_t* nt = rd_kafka_NewTopic_new(topic.c_str(), partitions, 1, errstr, sizeof errstr);
  if (nt == nullptr) return Error(ErrorKind::kInvalidArgument, errstr);
  ASSIGN_OR_RETURN(AdminOptionsPtr options, make_admin_options(rk.get(), RD_KAFKA_ADMIN_OP_CREATETOPICS, 10000));
  rd_kafka_CreateTopics(rk.get(), &nt, 1, options.get(), queue.get());
  rd_kafka_NewTopic_destroy(nt);
  ASSIGN_OR_RETURN(EventPtr event, wait_admin_result(queue.get(), 15000));
  size_t n = 0;
  const rd_kafka_topic_result_t** results =
      rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event.get()), &n);
  for (size_t i = 0; i < n; ++i) {
    rd_kafka_resp_err_t err = rd_kafka_topic_result_error(results[i]);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR && err != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
      return Error(ErrorKind::kIo, std::string("create topic ") + topic + ": " + rd_kafka_err2str(err));
    }
  }
  ASSIGN_OR_RETURN(MetadataPtr md, fetch_metadata(rk.get(), 10000));
  for (int i = 0; i < md->topic_cnt; ++i) {
    if (topic == md->topics[i].topic && md->topics[i].partition_cnt > 0) return md->topics[i].partition_cnt;
  }
  return Error(ErrorKind::kNotFound, "topic " + topic + " has no partitions in the metadata");
}

namespace {

double ms(int64_t ns) { return double(ns) / 1e6; }

double rate(uint64_t n, double seconds) { return seconds > 0 ? double(n) / seconds : 0.0; }

struct Quantile {
  const char* name;
  double q;
};
constexpr Quantile kQuantiles[] = {{"p50", 0.5}, {"p95", 0.95}, {"p99", 0.99}, {"p99.9", 0.999}};

}  // namespace

void print_text(const Figures& f) {
  std::printf("samsa bench %s:", f.mode.c_str());
  for (const auto& [k, v] : f.config) std::printf(" %s=%s", k.c_str(), v.c_str());
  std::printf("\n");
  std::printf("  %llu records, %.1f MB in %.2f s: %.0f records/s, %.1f MB/s (MB = 10^6 bytes of record values)\n",
              (unsigned long long)f.records, double(f.bytes) / 1e6, f.seconds, rate(f.records, f.seconds),
              rate(f.bytes, f.seconds) / 1e6);
  if (f.target_rate > 0) std::printf("  target rate %.0f records/s\n", f.target_rate);
  if (f.has_latency && f.latency.count() > 0) {
    std::printf("  %s latency ms (%llu samples): mean %.3f", f.latency_name.c_str(),
                (unsigned long long)f.latency.count(), f.latency.mean() / 1e6);
    for (const Quantile& q : kQuantiles) std::printf(", %s %.3f", q.name, ms(f.latency.percentile(q.q)));
    std::printf(", max %.3f\n", ms(f.latency.max()));
  }
  if (f.errors > 0) std::printf("  %llu errors, first: %s\n", (unsigned long long)f.errors, f.first_error.c_str());
  std::fflush(stdout);
}

void print_json(const Figures& f) {
  std::printf("{\"mode\":\"%s\",\"records\":%llu,\"bytes\":%llu,\"seconds\":%.6f,\"records_per_sec\":%.1f,"
              "\"mb_per_sec\":%.3f,\"errors\":%llu",
              f.mode.c_str(), (unsigned long long)f.records, (unsigned long long)f.bytes, f.seconds,
              rate(f.records, f.seconds), rate(f.bytes, f.seconds) / 1e6, (unsigned long long)f.errors);
  if (f.target_rate > 0) std::printf(",\"target_rate\":%.1f", f.target_rate);
  if (!f.first_error.empty()) std::printf(",\"first_error\":\"%s\"", json_escape(f.first_error).c_str());
  if (f.has_latency) {
    std::printf(",\"latency\":{\"kind\":\"%s\",\"samples\":%llu,\"mean_ms\":%.4f", f.latency_name.c_str(),
                (unsigned long long)f.latency.count(), f.latency.mean() / 1e6);
    for (const Quantile& q : kQuantiles) std::printf(",\"%s_ms\":%.4f", q.name, ms(f.latency.percentile(q.q)));
    std::printf(",\"max_ms\":%.4f}", ms(f.latency.max()));
  }
  std::printf(",\"config\":{");
  for (size_t i = 0; i < f.config.size(); ++i) {
    std::printf("%s\"%s\":\"%s\"", i ? "," : "", json_escape(f.config[i].first).c_str(),
                json_escape(f.config[i].second).c_str());
  }
  std::printf("}}\n");
  std::fflush(stdout);
}

Progress::Progress(std::string mode, double interval_s)
    : mode_(std::move(mode)), interval_ns_(int64_t(interval_s * 1e9)), start_ns_(now_ns()), last_ns_(start_ns_) {}

bool Progress::tick(uint64_t records, uint64_t bytes, const LatencyHistogram* window) {
  if (interval_ns_ <= 0) return false;
  int64_t now = now_ns();
  if (now - last_ns_ < interval_ns_) return false;
  double dt = double(now - last_ns_) / 1e9;
  std::fprintf(stderr, "[%s %6.1f s] %llu records, %.0f records/s, %.1f MB/s", mode_.c_str(),
               double(now - start_ns_) / 1e9, (unsigned long long)records, double(records - last_records_) / dt,
               double(bytes - last_bytes_) / dt / 1e6);
  if (window && window->count() > 0) {
    std::fprintf(stderr, ", p50 %.2f ms, p99 %.2f ms, max %.2f ms", ms(window->percentile(0.5)),
                 ms(window->percentile(0.99)), ms(window->max()));
  }
  std::fprintf(stderr, "\n");
  last_ns_ = now;
  last_records_ = records;
  last_bytes_ = bytes;
  return true;
}

bool valid_compression(const std::string& c) {
  return c == "none" || c == "gzip" || c == "snappy" || c == "lz4" || c == "zstd";
}

}  // namespace samsa::cli::bench

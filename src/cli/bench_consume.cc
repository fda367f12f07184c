// `samsa bench consume` and `samsa bench e2e` (see bench_command.cc).
//
// Both read without a consumer group: the partitions are assigned directly
// (a group.id is still configured because librdkafka requires one, but no
// offsets are committed), so the figures are those of fetching alone.

#include <atomic>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "cli/bench_modes.h"
#include "cli/bench_support.h"

namespace samsa::cli::bench {
namespace {

using MessagePtr = std::unique_ptr<rd_kafka_message_t, void (*)(rd_kafka_message_t*)>;

// A consumer assigned to every partition of `topic`, starting at `start`
// (an offset or RD_KAFKA_OFFSET_BEGINNING/END); with `start` ==
// RD_KAFKA_OFFSET_END the current high watermarks are read first, so no
// record produced after this returns is missed.
Result<HandlePtr> assigned_consumer(const ClientOptions& client, const std::string& topic, int partitions,
                                    int64_t start, std::vector<std::pair<std::string, std::string>> extra) {
  extra.emplace_back("group.id", "samsa-bench-no-group");
  extra.emplace_back("enable.auto.commit", "false");
  extra.emplace_back("enable.auto.offset.store", "false");
  extra.emplace_back("client.id", "samsa-bench");
  ASSIGN_OR_RETURN(ConfPtr conf, make_conf(client, extra));
  ASSIGN_OR_RETURN(HandlePtr rk, make_client(RD_KAFKA_CONSUMER, std::move(conf)));
  rd_kafka_poll_set_consumer(rk.get());
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(partitions);
  for (int p = 0; p < partitions; ++p) {
    int64_t offset = start;
    if (start == RD_KAFKA_OFFSET_END) {
      int64_t low = 0, high = 0;
      rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(rk.get(), topic.c_str(), p, &low, &high, 10000);
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        rd_kafka_topic_partition_list_destroy(list);
        return Error(ErrorKind::kIo, std::string("watermarks of ") + topic + ": " + rd_kafka_err2str(err));
      }
      offset = high;
    }
    rd_kafka_topic_partition_list_add(list, topic.c_str(), p)->offset = offset;
  }
  rd_kafka_resp_err_t err = rd_kafka_assign(rk.get(), list);
  rd_kafka_topic_partition_list_destroy(list);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return Error(ErrorKind::kIo, rd_kafka_err2str(err));
  return rk;
}

// ---- consume ----

struct ConsumeArgs {
  CommonArgs common;
  std::string from = "earliest";
  int64_t idle_timeout_ms = 10000;
};

Status run_consume_bench(const ConsumeArgs& args, Figures& f) {
  ASSIGN_OR_RETURN(int partitions, ensure_topic(args.common.client, args.common.topic, int(args.common.partitions)));
  int64_t start = args.from == "earliest" ? RD_KAFKA_OFFSET_BEGINNING : RD_KAFKA_OFFSET_END;
  ASSIGN_OR_RETURN(HandlePtr rk, assigned_consumer(args.common.client, args.common.topic, partitions, start, {}));
  QueuePtr queue(rd_kafka_queue_get_consumer(rk.get()));
  f.config = {{"topic", args.common.topic}, {"partitions", std::to_string(partitions)}, {"from", args.from}};
  Progress progress("consume", args.common.progress_s);
  const uint64_t limit = args.common.records > 0 ? uint64_t(args.common.records) : UINT64_MAX;
  constexpr size_t kBatch = 4096;
  std::vector<rd_kafka_message_t*> batch(kBatch);
  const int64_t begin = now_ns();
  int64_t end = args.common.duration_s > 0 ? begin + int64_t(args.common.duration_s * 1e9) : INT64_MAX;
  int64_t first = 0, last = 0, last_seen = begin;
  while (f.records < limit) {
    int64_t now = now_ns();
    if (now >= end || now - last_seen > args.idle_timeout_ms * 1'000'000) break;
    ssize_t n = rd_kafka_consume_batch_queue(queue.get(), 100, batch.data(), kBatch);
    if (n < 0) return Error(ErrorKind::kIo, rd_kafka_err2str(rd_kafka_last_error()));
    for (ssize_t i = 0; i < n; ++i) {
      rd_kafka_message_t* m = batch[size_t(i)];
      if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        if (f.records < limit) {
          ++f.records;
          f.bytes += m->len;
        }
      } else if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        if (f.errors++ == 0) f.first_error = rd_kafka_message_errstr(m);
      }
      rd_kafka_message_destroy(m);
    }
    if (n > 0) {
      last_seen = last = now_ns();
      if (first == 0) {
        first = begin;  // time to first record counts: a consumer must fetch
        if (args.common.duration_s > 0) end = last + int64_t(args.common.duration_s * 1e9);
      }
    }
    progress.tick(f.records, f.bytes, nullptr);
  }
  f.seconds = first == 0 ? 0 : double(last - first) / 1e9;
  if (args.common.records > 0 && args.common.duration_s == 0 && f.records < limit) {
    ++f.errors;
    f.first_error = "stopped after " + std::to_string(args.idle_timeout_ms) + " ms without records, short of " +
                    std::to_string(limit);
  }
  return ok_status();
}

// ---- e2e ----

struct E2eArgs {
  CommonArgs common;
  std::string acks = "1";
  std::string compression = "none";
  int64_t linger_ms = 0;
  int64_t rate = 10000;
  std::string warmup_text = "1";
};

// The producer side of e2e: records at start + i/rate, each carrying its
// scheduled wall-clock time (ns, little-endian) in its first 8 bytes and as
// its Kafka timestamp (ms). A late send keeps its scheduled time. Rate 0 =
// as fast as the client takes them, each stamped when handed over (used to
// find the pipeline's peak rate, where latency is queueing). Sending stops
// at `end_mono` even when behind schedule.
struct Pacer {
  std::atomic<uint64_t> sent{0};
  std::atomic<bool> done{false};
  std::string error;
};

void produce_paced(rd_kafka_t* rk, const E2eArgs& args, int64_t start_mono, int64_t start_wall, int64_t end_mono,
                   Pacer& pacer) {
  PayloadPool payloads(size_t(args.common.record_size), 7);
  std::vector<char> value(size_t(args.common.record_size));
  const double interval = args.rate > 0 ? 1e9 / double(args.rate) : 0;
  if (interval == 0) sleep_until(start_mono);
  for (uint64_t i = 0;; ++i) {
    int64_t offset = int64_t(double(i) * interval);
    if (start_mono + offset >= end_mono) break;
    if ((i & 255) == 0 && now_ns() >= end_mono) break;
    // Records already due go out back to back; a record is late by as much
    // as its send is, and its latency counts from its scheduled time.
    if (start_mono + offset > now_ns() + 20'000) sleep_until(start_mono + offset);
    int64_t scheduled_wall = interval > 0 ? start_wall + offset : wall_now_ns();
    std::memcpy(value.data(), payloads.value(i), value.size());
    std::memcpy(value.data(), &scheduled_wall, sizeof scheduled_wall);
    for (;;) {
      rd_kafka_resp_err_t err = rd_kafka_producev(
          rk, RD_KAFKA_V_TOPIC(args.common.topic.c_str()), RD_KAFKA_V_VALUE(value.data(), value.size()),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_TIMESTAMP(scheduled_wall / 1'000'000), RD_KAFKA_V_END);
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR) break;
      if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        pacer.error = rd_kafka_err2str(err);
        pacer.done = true;
        return;
      }
      rd_kafka_poll(rk, 1);
    }
    pacer.sent.store(i + 1, std::memory_order_relaxed);
    if ((i & 255) == 0) rd_kafka_poll(rk, 0);
  }
  rd_kafka_flush(rk, 30000);
  pacer.done = true;
}

Status run_e2e_bench(const E2eArgs& args, Figures& f, double warmup_s) {
  ASSIGN_OR_RETURN(int partitions, ensure_topic(args.common.client, args.common.topic, int(args.common.partitions)));
  ASSIGN_OR_RETURN(HandlePtr consumer, assigned_consumer(args.common.client, args.common.topic, partitions,
                                                         RD_KAFKA_OFFSET_END, {{"fetch.wait.max.ms", "100"}}));
  ASSIGN_OR_RETURN(ConfPtr conf, make_conf(args.common.client, {{"acks", args.acks},
                                                                {"compression.codec", args.compression},
                                                                {"linger.ms", std::to_string(args.linger_ms)},
                                                                {"delivery.report.only.error", "true"},
                                                                {"client.id", "samsa-bench"}}));
  ASSIGN_OR_RETURN(HandlePtr producer, make_client(RD_KAFKA_PRODUCER, std::move(conf)));
  f.config = {{"topic", args.common.topic}, {"partitions", std::to_string(partitions)},
              {"record_size", std::to_string(args.common.record_size)}, {"acks", args.acks},
              {"compression", args.compression}, {"linger_ms", std::to_string(args.linger_ms)},
              {"warmup_s", args.warmup_text}};
  f.target_rate = double(args.rate);
  const double duration = args.common.duration_s > 0 ? args.common.duration_s : 10.0;
  Pacer pacer;
  const int64_t start_mono = now_ns() + 100'000'000;  // let the consumer's first fetch go out
  const int64_t start_wall = wall_now_ns() + 100'000'000;
  const int64_t end_mono = start_mono + int64_t(duration * 1e9);
  const int64_t measured_from_wall = start_wall + int64_t(warmup_s * 1e9);
  std::thread producing(produce_paced, producer.get(), std::cref(args), start_mono, start_wall, end_mono,
                        std::ref(pacer));
  Progress progress("e2e", args.common.progress_s);
  LatencyHistogram window;
  uint64_t received = 0;
  int64_t drain_deadline = INT64_MAX;
  const int64_t window_end_wall = start_wall + int64_t(duration * 1e9);
  const bool unlimited = args.rate == 0;
  while (true) {
    if (unlimited && now_ns() >= end_mono) break;  // the peak is measured; the backlog is not drained
    if (pacer.done.load() && drain_deadline == INT64_MAX) drain_deadline = now_ns() + 10'000'000'000;
    if (pacer.done.load() && received >= pacer.sent.load()) break;
    if (now_ns() > drain_deadline) break;
    rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer.get(), 50);
    if (m == nullptr) continue;
    MessagePtr owner(m, rd_kafka_message_destroy);
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF && f.errors++ == 0) f.first_error = rd_kafka_message_errstr(m);
      continue;
    }
    int64_t now_wall = wall_now_ns();
    ++received;
    if (m->len < 8) continue;
    int64_t scheduled;
    std::memcpy(&scheduled, m->payload, sizeof scheduled);
    // The achieved rate: at a fixed rate, records scheduled in the window
    // that also arrived in it (a run that falls behind shows it, catching up
    // a warm-up backlog does not count); at the unlimited rate, whatever
    // the consumer received in the window (its backlog only grows).
    bool counted = now_wall < window_end_wall && (unlimited ? now_wall >= measured_from_wall
                                                            : scheduled >= measured_from_wall);
    if (counted) {
      ++f.records;
      f.bytes += m->len;
    }
    if (scheduled < measured_from_wall) continue;  // warm-up
    f.latency.record(now_wall - scheduled);
    window.record(now_wall - scheduled);
    if (progress.tick(received, received * uint64_t(args.common.record_size), &window)) window.reset();
  }
  producing.join();
  f.seconds = duration - warmup_s;
  if (!pacer.error.empty()) {
    ++f.errors;
    f.first_error = pacer.error;
  }
  uint64_t sent = pacer.sent.load();
  if (received < sent && !unlimited) {
    f.errors += sent - received;
    if (f.first_error.empty()) f.first_error = std::to_string(sent - received) + " records never arrived";
  }
  return ok_status();
}

template <typename Args>
int parse_common(ArgParser& parser, Args& args, int argc, char** argv, const char* name) {
  switch (parser.parse(argc, argv)) {
    case ParseOutcome::kHelp: return 0;
    case ParseOutcome::kError: return kUsageExitCode;
    case ParseOutcome::kOk: break;
  }
  if (Status c = args.common.finish(); !c.ok()) {
    std::fprintf(stderr, "samsa bench %s: %s\n", name, c.error().message().c_str());
    return kUsageExitCode;
  }
  return -1;
}

}  // namespace

int consume_main(int argc, char** argv) {
  ConsumeArgs args;
  ArgParser parser("samsa bench consume", "Read records as fast as possible and report records/s and MB/s.");
  args.common.add_to(parser);
  parser.add_string("from", 0, "WHERE", "earliest (default) or latest (live: records produced meanwhile)",
                    &args.from);
  parser.add_int("idle-timeout-ms", "MS", "Stop after this long without records (default 10000)",
                 &args.idle_timeout_ms, 1, 3'600'000);
  if (int rc = parse_common(parser, args, argc, argv, "consume"); rc >= 0) return rc;
  if (args.from != "earliest" && args.from != "latest") {
    std::fprintf(stderr, "samsa bench consume: --from must be earliest or latest\n");
    return kUsageExitCode;
  }
  Figures f;
  f.mode = "consume";
  Status st = run_consume_bench(args, f);
  if (!st.ok()) return report_failure("bench consume", st.error().to_string());
  if (args.common.json) print_json(f);
  else print_text(f);
  return f.errors == 0 ? 0 : 1;
}

int e2e_main(int argc, char** argv) {
  E2eArgs args;
  ArgParser parser("samsa bench e2e",
                   "Produce at a fixed --rate for --duration and consume at the same time; report the "
                   "end-to-end latency of each record from its scheduled create time.");
  args.common.add_to(parser);
  parser.add_int("rate", "RECORDS_PER_S",
                 "Target rate; 0 = as fast as possible, to find the peak (default 10000)", &args.rate, 0,
                 100'000'000);
  parser.add_string("acks", 0, "ACKS", "0, 1 or -1/all (default 1)", &args.acks);
  parser.add_string("compression", 0, "CODEC", "none, gzip, snappy, lz4 or zstd (default none)", &args.compression);
  parser.add_int("linger-ms", "MS", "librdkafka linger.ms (default 0)", &args.linger_ms, 0, 900000);
  parser.add_string("warmup", 0, "SECONDS", "Leave out records scheduled in the first SECONDS (default 1)",
                    &args.warmup_text);
  if (int rc = parse_common(parser, args, argc, argv, "e2e"); rc >= 0) return rc;
  char* end = nullptr;
  double warmup = std::strtod(args.warmup_text.c_str(), &end);
  double duration = args.common.duration_s > 0 ? args.common.duration_s : 10.0;
  if (*end != '\0' || warmup < 0 || warmup >= duration) {
    std::fprintf(stderr, "samsa bench e2e: --warmup must be in [0, duration)\n");
    return kUsageExitCode;
  }
  if (args.acks == "all") args.acks = "-1";
  if (!valid_compression(args.compression)) {
    std::fprintf(stderr, "samsa bench e2e: unknown --compression '%s'\n", args.compression.c_str());
    return kUsageExitCode;
  }
  Figures f;
  f.mode = "e2e";
  f.has_latency = true;
  f.latency_name = "e2e";
  Status st = run_e2e_bench(args, f, warmup);
  if (!st.ok()) return report_failure("bench e2e", st.error().to_string());
  if (args.common.json) print_json(f);
  else print_text(f);
  return f.errors == 0 ? 0 : 1;
}

}  // namespace samsa::cli::bench

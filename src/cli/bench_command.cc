// `samsa bench`: load generators on librdkafka, in the spirit of Kafka's
// kafka-producer-perf-test and kafka-consumer-perf-test.
//
//   samsa bench produce  records/s, MB/s and acknowledgement latency
//                        percentiles (from the moment a record is handed to
//                        librdkafka to its delivery report).
//   samsa bench consume  records/s and MB/s reading a topic from the
//                        earliest offset or live (bench_consume.cc).
//   samsa bench e2e      end-to-end latency at a fixed target rate,
//                        measured from each record's scheduled create time,
//                        so a stall delays the clock of every record behind
//                        it (no coordinated omission) (bench_consume.cc).
//
// Results go to stdout as text, or as one JSON object with --json; a
// progress line goes to stderr every --progress seconds.

#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "cli/bench_modes.h"
#include "cli/bench_support.h"
#include "cli/commands.h"

namespace samsa::cli {
namespace bench {
namespace {

// Shorter sleeps cost more in wake-ups than they gain in pacing.
constexpr int64_t kMinSleepNs = 20'000;

struct ProduceArgs {
  CommonArgs common;
  std::string acks = "1";
  std::string compression = "none";
  int64_t linger_ms = 5;
  int64_t batch_size = 1'000'000;  // librdkafka batch.size (bytes)
  int64_t rate = 0;                // records/s; 0 = as fast as possible
};

struct ProduceState {
  Figures* figures;
  LatencyHistogram window;  // since the last progress line
  uint64_t record_size;
};

void on_delivery(rd_kafka_t*, const rd_kafka_message_t* msg, void* opaque) {
  auto* state = static_cast<ProduceState*>(opaque);
  Figures& f = *state->figures;
  if (msg->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    if (f.errors++ == 0) f.first_error = std::string(rd_kafka_err2name(msg->err)) + ": " + rd_kafka_message_errstr(msg);
    return;
  }
  int64_t latency = now_ns() - int64_t(reinterpret_cast<intptr_t>(msg->_private));
  f.latency.record(latency);
  state->window.record(latency);
  ++f.records;
  f.bytes += state->record_size;
}

Status run_produce_bench(const ProduceArgs& args, Figures& f) {
  ASSIGN_OR_RETURN(int partitions, ensure_topic(args.common.client, args.common.topic, int(args.common.partitions)));
  ProduceState state{&f, {}, uint64_t(args.common.record_size)};
  ASSIGN_OR_RETURN(ConfPtr conf, make_conf(args.common.client,
                                           {{"acks", args.acks},
                                            {"compression.codec", args.compression},
                                            {"linger.ms", std::to_string(args.linger_ms)},
                                            {"batch.size", std::to_string(args.batch_size)},
                                            {"queue.buffering.max.messages", "1000000"},
                                            {"queue.buffering.max.kbytes", "1048576"},
                                            {"client.id", "samsa-bench"}}));
  rd_kafka_conf_set_dr_msg_cb(conf.get(), on_delivery);
  rd_kafka_conf_set_opaque(conf.get(), &state);
  ASSIGN_OR_RETURN(HandlePtr rk, make_client(RD_KAFKA_PRODUCER, std::move(conf)));
  rd_kafka_topic_t* topic = rd_kafka_topic_new(rk.get(), args.common.topic.c_str(), nullptr);
  std::unique_ptr<rd_kafka_topic_t, void (*)(rd_kafka_topic_t*)> topic_owner(topic, rd_kafka_topic_destroy);

  f.config = {{"topic", args.common.topic},       {"partitions", std::to_string(partitions)},
              {"record_size", std::to_string(args.common.record_size)}, {"acks", args.acks},
              {"compression", args.compression},  {"linger_ms", std::to_string(args.linger_ms)},
              {"batch_size", std::to_string(args.batch_size)}};
  f.target_rate = double(args.rate);
  PayloadPool payloads(size_t(args.common.record_size), 42);
  Progress progress("produce", args.common.progress_s);
  const uint64_t limit = args.common.records > 0 ? uint64_t(args.common.records) : UINT64_MAX;
  const int64_t start = now_ns();
  const int64_t end = args.common.duration_s > 0 ? start + int64_t(args.common.duration_s * 1e9) : INT64_MAX;
  const double interval_ns = args.rate > 0 ? 1e9 / double(args.rate) : 0;
  uint64_t sent = 0;
  while (sent < limit) {
    if ((sent & 1023) == 0) {
      if (now_ns() >= end) break;
      rd_kafka_poll(rk.get(), 0);
      if (progress.tick(f.records, f.bytes, &state.window)) state.window.reset();
    }
    if (interval_ns > 0) {
      // Everything due is sent at once; sleep only when ahead of schedule.
      int64_t due = start + int64_t(double(sent) * interval_ns);
      if (due > now_ns() + kMinSleepNs) sleep_until(due);
    }
    void* enqueued = reinterpret_cast<void*>(intptr_t(now_ns()));
    char* value = payloads.value(sent);
    // Flag 0: librdkafka references the pool (no copy); it outlives the handle.
    if (rd_kafka_produce(topic, RD_KAFKA_PARTITION_UA, 0, value, size_t(args.common.record_size), nullptr, 0,
                         enqueued) == -1) {
      rd_kafka_resp_err_t err = rd_kafka_last_error();
      if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) return Error(ErrorKind::kIo, rd_kafka_err2str(err));
      rd_kafka_poll(rk.get(), 1);
      continue;
    }
    ++sent;
  }
  rd_kafka_flush(rk.get(), 60000);
  f.seconds = double(now_ns() - start) / 1e9;
  uint64_t lost = sent - f.records - f.errors;
  if (lost > 0) {
    f.errors += lost;
    if (f.first_error.empty()) f.first_error = "records still unacknowledged after 60 s";
  }
  return ok_status();
}

int produce_main(int argc, char** argv) {
  ProduceArgs args;
  ArgParser parser("samsa bench produce",
                   "Produce records as fast as possible (or at --rate) and report records/s, MB/s and the "
                   "latency of acknowledgements.");
  args.common.add_to(parser);
  parser.add_string("acks", 0, "ACKS", "0, 1 or -1/all (default 1)", &args.acks);
  parser.add_string("compression", 0, "CODEC", "none, gzip, snappy, lz4 or zstd (default none)", &args.compression);
  parser.add_int("linger-ms", "MS", "librdkafka linger.ms (default 5)", &args.linger_ms, 0, 900000);
  parser.add_int("batch-size", "BYTES", "librdkafka batch.size (default 1000000)", &args.batch_size, 1, 2147483647);
  parser.add_int("rate", "RECORDS_PER_S", "Target rate; 0 = unlimited (default)", &args.rate, 0, 1'000'000'000);
  switch (parser.parse(argc, argv)) {
    case ParseOutcome::kHelp: return 0;
    case ParseOutcome::kError: return kUsageExitCode;
    case ParseOutcome::kOk: break;
  }
  if (Status c = args.common.finish(); !c.ok()) {
    std::fprintf(stderr, "samsa bench produce: %s\n", c.error().message().c_str());
    return kUsageExitCode;
  }
  if (!valid_compression(args.compression)) {
    std::fprintf(stderr, "samsa bench produce: unknown --compression '%s'\n", args.compression.c_str());
    return kUsageExitCode;
  }
  if (args.acks == "all") args.acks = "-1";
  Figures f;
  f.mode = "produce";
  f.has_latency = true;
  f.latency_name = "ack";
  Status st = run_produce_bench(args, f);
  if (!st.ok()) return report_failure("bench produce", st.error().to_string());
  if (args.common.json) print_json(f);
  else print_text(f);
  return f.errors == 0 ? 0 : 1;
}

}  // namespace

void CommonArgs::add_to(ArgParser& parser) {
  client.add_to(parser);
  parser.add_string("topic", 't', "TOPIC", "Topic (created with --partitions if missing; default samsa-bench)",
                    &topic);
  parser.add_int("partitions", "N", "Partitions of a topic the tool creates (default 1)", &partitions, 1, 100000);
  parser.add_int("record-size", "BYTES", "Size of each record value (default 100)", &record_size, 8, 100'000'000);
  parser.add_int("records", "N", "Stop after N records (default 1000000 unless --duration)", &records, 0,
                 INT64_MAX);
  parser.add_string("duration", 0, "SECONDS", "Stop after this long instead of a record count", &duration_text);
  parser.add_string("progress", 0, "SECONDS", "Progress line on stderr every SECONDS; 0 = none (default 5)",
                    &progress_text);
  parser.add_flag("json", 0, "Print the result as one JSON object", &json);
}

Status CommonArgs::finish() {
  char* end = nullptr;
  if (!duration_text.empty()) {
    duration_s = std::strtod(duration_text.c_str(), &end);
    if (*end != '\0' || duration_s <= 0) return Error(ErrorKind::kInvalidArgument, "bad --duration");
    if (records == 1'000'000) records = 0;  // the default count yields to a duration
  }
  progress_s = std::strtod(progress_text.c_str(), &end);
  if (*end != '\0' || progress_s < 0) return Error(ErrorKind::kInvalidArgument, "bad --progress");
  return ok_status();
}

}  // namespace bench

int run_bench(int argc, char** argv) {
  static constexpr const char* kUsage =
      "Usage: samsa bench <produce|consume|e2e> [options]\n\n"
      "  produce   records/s, MB/s and acknowledgement latency percentiles\n"
      "  consume   records/s and MB/s, from the earliest offset or live\n"
      "  e2e       end-to-end latency (p50/p99/p99.9/max) at a fixed target rate,\n"
      "            from each record's scheduled create time (no coordinated omission)\n\n"
      "Run 'samsa bench <mode> --help' for the options of a mode.\n";
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return kUsageExitCode;
  }
  std::string_view mode = argv[1];
  if (mode == "--help" || mode == "-h") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (mode == "produce") return bench::produce_main(argc - 1, argv + 1);
  if (mode == "consume") return bench::consume_main(argc - 1, argv + 1);
  if (mode == "e2e") return bench::e2e_main(argc - 1, argv + 1);
  std::fprintf(stderr, "samsa bench: unknown mode '%s'\n\n%s", argv[1], kUsage);
  return kUsageExitCode;
}

}  // namespace samsa::cli

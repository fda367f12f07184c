// `samsa produce`: one record per line of stdin, sent with librdkafka.
//
// Keys: with --key-separator SEP each line is split at the first SEP into
// key and value (a line without SEP is an error, as in Kafka's console
// producer); without it records have a null key. The line's trailing
// newline is not part of the record; empty lines become empty values.
// Exit status 0 only if every record was acknowledged.

#include <cstdio>
#include <cstdlib>
#include <string>

#include "cli/commands.h"
#include "cli/kafka_client.h"

namespace samsa::cli {
namespace {

struct ProduceArgs {
  ClientOptions client;
  std::string topic;
  int64_t partition = -1;
  std::string key_separator;
  std::string compression = "none";
  std::string acks = "all";
  int64_t timeout_ms = 60000;
};

// Delivery results, written by the delivery callback (which runs inside
// rd_kafka_poll/flush on this thread).
struct DeliveryState {
  uint64_t delivered = 0;
  uint64_t failed = 0;
  std::string first_error;
};

void on_delivery(rd_kafka_t*, const rd_kafka_message_t* msg, void* opaque) {
  auto* state = static_cast<DeliveryState*>(opaque);
  if (msg->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    ++state->delivered;
    return;
  }
  if (state->failed++ == 0) {
    state->first_error = std::string(rd_kafka_err2name(msg->err)) + ": " + rd_kafka_message_errstr(msg);
  }
}

bool valid_compression(const std::string& c) {
  return c == "none" || c == "gzip" || c == "snappy" || c == "lz4" || c == "zstd";
}

bool valid_acks(const std::string& a) { return a == "0" || a == "1" || a == "all" || a == "-1"; }

// Sends one record, waiting for queue space when the local queue is full.
Status send(rd_kafka_t* rk, const ProduceArgs& args, const char* key, size_t key_len,
            const char* value, size_t value_len) {
  for (;;) {
    rd_kafka_resp_err_t err = rd_kafka_producev(
        rk, RD_KAFKA_V_TOPIC(args.topic.c_str()),
        RD_KAFKA_V_PARTITION(static_cast<int32_t>(args.partition)),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_KEY(const_cast<char*>(key), key_len),
        RD_KAFKA_V_VALUE(const_cast<char*>(value), value_len), RD_KAFKA_V_END);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return ok_status();
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      return Error(ErrorKind::kIo, std::string("cannot produce: ") + rd_kafka_err2str(err));
    }
    rd_kafka_poll(rk, 100);  // serves delivery reports, which frees queue space
  }
}

// Reads stdin to the end, producing each line. Returns the number of lines.
Result<uint64_t> produce_lines(rd_kafka_t* rk, const ProduceArgs& args) {
  char* line = nullptr;
  size_t capacity = 0;
  uint64_t line_number = 0;
  Status status = ok_status();
  for (;;) {
    ssize_t n = getline(&line, &capacity, stdin);
    if (n < 0) break;
    ++line_number;
    size_t len = static_cast<size_t>(n);
    if (len > 0 && line[len - 1] == '\n') --len;
    std::string_view text(line, len);
    if (args.key_separator.empty()) {
      status = send(rk, args, nullptr, 0, text.data(), text.size());
    } else {
      size_t at = text.find(args.key_separator);
      if (at == std::string_view::npos) {
        status = Error(ErrorKind::kInvalidArgument,
                       "line " + std::to_string(line_number) + " has no key separator '" +
                           args.key_separator + "'");
      } else {
        size_t value_at = at + args.key_separator.size();
        status = send(rk, args, text.data(), at, text.data() + value_at, text.size() - value_at);
      }
    }
    if (!status.ok()) break;
    rd_kafka_poll(rk, 0);
  }
  std::free(line);
  if (!status.ok()) return status.error();
  return line_number;
}

Status produce(const ProduceArgs& args, DeliveryState& state) {
  ASSIGN_OR_RETURN(ConfPtr conf,
                   make_conf(args.client, {{"compression.codec", args.compression},
                                           {"acks", args.acks},
                                           {"message.timeout.ms", std::to_string(args.timeout_ms)},
                                           {"linger.ms", "5"}}));
  rd_kafka_conf_set_dr_msg_cb(conf.get(), on_delivery);
  rd_kafka_conf_set_opaque(conf.get(), &state);
  ASSIGN_OR_RETURN(HandlePtr rk, make_client(RD_KAFKA_PRODUCER, std::move(conf)));
  auto lines = produce_lines(rk.get(), args);
  // Flush what was queued even after an input error: those lines were
  // accepted and the user expects them sent. message.timeout.ms bounds it.
  rd_kafka_flush(rk.get(), static_cast<int>(args.timeout_ms) + 5000);
  if (!lines.ok()) return lines.error();
  uint64_t outstanding = static_cast<uint64_t>(rd_kafka_outq_len(rk.get()));
  if (state.failed > 0) {
    return Error(ErrorKind::kIo, std::to_string(state.failed) + " of " + std::to_string(*lines) +
                                     " records failed; first error: " + state.first_error);
  }
  if (outstanding > 0) {
    return Error(ErrorKind::kTimedOut, std::to_string(outstanding) + " records not acknowledged");
  }
  return ok_status();
}

}  // namespace

int run_produce(int argc, char** argv) {
  ProduceArgs args;
  ArgParser parser("samsa produce",
                   "Read records from stdin, one per line, and produce them to a topic.");
  parser.add_string("topic", 't', "TOPIC", "Topic to produce to", &args.topic);
  parser.add_int("partition", "N", "Send every record to partition N (default: by key hash, or spread)",
                 &args.partition, 0, 1 << 30);
  parser.add_string("key-separator", 'K', "SEP",
                    "Split each line at the first SEP into key and value", &args.key_separator);
  parser.add_string("compression", 'z', "CODEC", "none, gzip, snappy, lz4 or zstd (default none)",
                    &args.compression);
  parser.add_string("acks", 0, "ACKS", "0, 1 or all (default all)", &args.acks);
  parser.add_int("timeout-ms", "MS", "Give up on a record not acknowledged after MS (default 60000)",
                 &args.timeout_ms, 1, 3600 * 1000);
  args.client.add_to(parser);
  parser.require("topic");
  parser.set_epilog(
      "Examples:\n"
      "  printf 'a\\nb\\n' | samsa produce --topic events\n"
      "  printf 'user1:hello\\n' | samsa produce --topic events --key-separator : --compression zstd");
  if (auto outcome = parser.parse(argc, argv); outcome != ParseOutcome::kOk) {
    return outcome == ParseOutcome::kHelp ? 0 : kUsageExitCode;
  }
  if (!valid_compression(args.compression)) {
    std::fprintf(stderr, "samsa produce: unknown --compression '%s' (none, gzip, snappy, lz4, zstd)\n",
                 args.compression.c_str());
    return kUsageExitCode;
  }
  if (!valid_acks(args.acks)) {
    std::fprintf(stderr, "samsa produce: --acks must be 0, 1 or all, got '%s'\n", args.acks.c_str());
    return kUsageExitCode;
  }
  DeliveryState state;
  Status status = produce(args, state);
  if (!status.ok()) return report_failure("produce", status.error().message());
  return 0;
}

}  // namespace samsa::cli

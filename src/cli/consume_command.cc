// `samsa consume`: records of a topic to stdout, one per line.
//
// Two modes. With --group the high-level consumer joins the group and
// subscribes (offsets are committed; --from-beginning applies only where
// the group has no committed offset). Without --group the consumer assigns
// the partitions itself (all of them, or --partition) and starts at the
// beginning (--from-beginning), at --offset, or at the end.
//
// It stops after --max-messages records, after --timeout-ms without a
// record (the idle clock also restarts when partitions are assigned), or on
// SIGINT/SIGTERM; then prints "Processed a total of N messages" to stderr.

#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <string_view>

#include "cli/commands.h"
#include "cli/kafka_client.h"

namespace samsa::cli {
namespace {

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

struct ConsumeArgs {
  ClientOptions client;
  std::string topic;
  std::string group;
  int64_t partition = -1;
  int64_t offset = -1;
  bool from_beginning = false;
  int64_t max_messages = -1;
  int64_t timeout_ms = -1;
  bool print_key = false;
  bool print_partition = false;
  bool print_offset = false;
  std::string key_separator = "\t";
};

using Clock = std::chrono::steady_clock;

// Written by the rebalance callback so the idle clock restarts on assignment.
struct ConsumeState {
  Clock::time_point last_activity = Clock::now();
};

void destroy_error(rd_kafka_error_t* error) {
  if (error != nullptr) rd_kafka_error_destroy(error);
}

void on_rebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* parts,
                  void* opaque) {
  auto* state = static_cast<ConsumeState*>(opaque);
  state->last_activity = Clock::now();
  bool cooperative = std::string_view(rd_kafka_rebalance_protocol(rk)) == "COOPERATIVE";
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    if (cooperative) destroy_error(rd_kafka_incremental_assign(rk, parts));
    else rd_kafka_assign(rk, parts);
  } else if (cooperative) {
    destroy_error(rd_kafka_incremental_unassign(rk, parts));
  } else {
    rd_kafka_assign(rk, nullptr);
  }
}

void print_record(const ConsumeArgs& args, const rd_kafka_message_t* msg) {
  if (args.print_partition) std::printf("Partition:%d\t", msg->partition);
  if (args.print_offset) std::printf("Offset:%lld\t", static_cast<long long>(msg->offset));
  if (args.print_key) {
    if (msg->key == nullptr) std::fputs("null", stdout);
    else std::fwrite(msg->key, 1, msg->key_len, stdout);
    std::fputs(args.key_separator.c_str(), stdout);
  }
  if (msg->payload != nullptr) std::fwrite(msg->payload, 1, msg->len, stdout);
  std::fputc('\n', stdout);
}

// Assigns the topic's partitions without a group.
Status assign_partitions(rd_kafka_t* rk, const ConsumeArgs& args) {
  ASSIGN_OR_RETURN(MetadataPtr md, fetch_metadata(rk, 30000));
  const rd_kafka_metadata_topic_t* topic = nullptr;
  for (int t = 0; t < md->topic_cnt; ++t) {
    if (args.topic == md->topics[t].topic) topic = &md->topics[t];
  }
  if (topic == nullptr || topic->err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
    return Error(ErrorKind::kNotFound, "topic '" + args.topic + "' does not exist");
  }
  int64_t start = args.from_beginning ? RD_KAFKA_OFFSET_BEGINNING : RD_KAFKA_OFFSET_END;
  if (args.offset >= 0) start = args.offset;
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(topic->partition_cnt);
  for (int p = 0; p < topic->partition_cnt; ++p) {
    int32_t id = topic->partitions[p].id;
    if (args.partition >= 0 && id != args.partition) continue;
    rd_kafka_topic_partition_list_add(list, args.topic.c_str(), id)->offset = start;
  }
  int count = list->cnt;
  rd_kafka_resp_err_t err = count > 0 ? rd_kafka_assign(rk, list) : RD_KAFKA_RESP_ERR_NO_ERROR;
  rd_kafka_topic_partition_list_destroy(list);
  if (count == 0) {
    return Error(ErrorKind::kNotFound, "topic '" + args.topic + "' has no partition " +
                                           std::to_string(args.partition));
  }
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Error(ErrorKind::kIo, std::string("cannot assign partitions: ") + rd_kafka_err2str(err));
  }
  return ok_status();
}

Result<HandlePtr> open_consumer(const ConsumeArgs& args, ConsumeState& state) {
  std::vector<std::pair<std::string, std::string>> defaults = {
      {"auto.offset.reset", args.from_beginning ? "earliest" : "latest"}};
  if (!args.group.empty()) {
    defaults.emplace_back("group.id", args.group);
  } else {
    // librdkafka's consumer needs a group.id even for assign(); this one is
    // never joined and nothing is committed to it.
    defaults.emplace_back("group.id", "samsa-cli-no-group");
    defaults.emplace_back("enable.auto.commit", "false");
    defaults.emplace_back("enable.auto.offset.store", "false");
  }
  ASSIGN_OR_RETURN(ConfPtr conf, make_conf(args.client, defaults));
  if (!args.group.empty()) rd_kafka_conf_set_rebalance_cb(conf.get(), on_rebalance);
  rd_kafka_conf_set_opaque(conf.get(), &state);
  ASSIGN_OR_RETURN(HandlePtr rk, make_client(RD_KAFKA_CONSUMER, std::move(conf)));
  rd_kafka_poll_set_consumer(rk.get());
  if (args.group.empty()) {
    RETURN_IF_ERROR(assign_partitions(rk.get(), args));
    return rk;
  }
  rd_kafka_topic_partition_list_t* topics = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(topics, args.topic.c_str(), RD_KAFKA_PARTITION_UA);
  rd_kafka_resp_err_t err = rd_kafka_subscribe(rk.get(), topics);
  rd_kafka_topic_partition_list_destroy(topics);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Error(ErrorKind::kIo, std::string("cannot subscribe: ") + rd_kafka_err2str(err));
  }
  return rk;
}

// Errors that will not go away by waiting; anything else is reported and
// the consumer keeps going (librdkafka retries).
bool is_fatal(rd_kafka_resp_err_t err) {
  return err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ||
         err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC || err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION ||
         err == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED ||
         err == RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED || err == RD_KAFKA_RESP_ERR__FATAL;
}

Result<int64_t> consume_loop(rd_kafka_t* rk, const ConsumeArgs& args, ConsumeState& state) {
  int64_t count = 0;
  while (g_stop == 0 && (args.max_messages < 0 || count < args.max_messages)) {
    if (args.timeout_ms >= 0 &&
        Clock::now() - state.last_activity >= std::chrono::milliseconds(args.timeout_ms)) {
      break;
    }
    rd_kafka_message_t* msg = rd_kafka_consumer_poll(rk, 100);
    if (msg == nullptr) continue;
    std::unique_ptr<rd_kafka_message_t, void (*)(rd_kafka_message_t*)> owner(
        msg, rd_kafka_message_destroy);
    if (msg->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) continue;
    if (msg->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      std::string text = std::string(rd_kafka_err2name(msg->err)) + ": " + rd_kafka_message_errstr(msg);
      if (is_fatal(msg->err)) return Error(ErrorKind::kIo, text);
      std::fprintf(stderr, "samsa consume: warning: %s\n", text.c_str());
      continue;
    }
    print_record(args, msg);
    ++count;
    state.last_activity = Clock::now();
  }
  return count;
}

}  // namespace

int run_consume(int argc, char** argv) {
  ConsumeArgs args;
  ArgParser parser("samsa consume", "Print the records of a topic to stdout, one per line.");
  parser.add_string("topic", 't', "TOPIC", "Topic to consume", &args.topic);
  parser.add_string("group", 'g', "GROUP",
                    "Consume as a member of this consumer group (commits offsets)", &args.group);
  parser.add_int("partition", "N", "Only this partition (without --group)", &args.partition, 0,
                 1 << 30);
  parser.add_int("offset", "OFFSET", "Start at this offset (with --partition)", &args.offset, 0,
                 INT64_MAX);
  parser.add_flag("from-beginning", 0,
                  "Start at the earliest record (default: only new records)", &args.from_beginning);
  parser.add_int("max-messages", "N", "Exit after N records", &args.max_messages, 0, INT64_MAX);
  parser.add_int("timeout-ms", "MS", "Exit after MS without a record (default: wait forever)",
                 &args.timeout_ms, 0, INT64_MAX);
  parser.add_flag("print-key", 0, "Print the key before the value (null key prints 'null')",
                  &args.print_key);
  parser.add_flag("print-partition", 0, "Print 'Partition:N<TAB>' first", &args.print_partition);
  parser.add_flag("print-offset", 0, "Print 'Offset:N<TAB>' before the key/value", &args.print_offset);
  parser.add_string("key-separator", 0, "SEP", "Between key and value with --print-key (default TAB)",
                    &args.key_separator);
  args.client.add_to(parser);
  parser.require("topic");
  parser.set_epilog(
      "Examples:\n"
      "  samsa consume --topic events --from-beginning --max-messages 10\n"
      "  samsa consume --topic events --group readers --print-key --timeout-ms 5000");
  if (auto outcome = parser.parse(argc, argv); outcome != ParseOutcome::kOk) {
    return outcome == ParseOutcome::kHelp ? 0 : kUsageExitCode;
  }
  if (!args.group.empty() && (args.partition >= 0 || args.offset >= 0)) {
    std::fputs("samsa consume: --partition and --offset cannot be used with --group\n", stderr);
    return kUsageExitCode;
  }
  if (args.offset >= 0 && args.partition < 0) {
    std::fputs("samsa consume: --offset needs --partition\n", stderr);
    return kUsageExitCode;
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  ConsumeState state;
  auto rk = open_consumer(args, state);
  if (!rk.ok()) return report_failure("consume", rk.error().message());
  state.last_activity = Clock::now();
  auto count = consume_loop(rk->get(), args, state);
  std::fflush(stdout);
  // Leaves the group (and commits) promptly instead of waiting for the
  // session timeout on the coordinator.
  rd_kafka_consumer_close(rk->get());
  if (!count.ok()) return report_failure("consume", count.error().message());
  std::fprintf(stderr, "Processed a total of %lld messages\n", static_cast<long long>(*count));
  return 0;
}

}  // namespace samsa::cli

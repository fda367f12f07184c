// `samsa topic create|list|describe|delete`: topic administration through
// librdkafka's admin API (CreateTopics, DeleteTopics, DescribeConfigs) and
// Metadata; describe reads Metadata over the wire (cli/wire_client.h) for
// the offline replicas and topic ids librdkafka 2.0 does not report.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cli/action_table.h"
#include "cli/cluster_metadata.h"
#include "cli/commands.h"
#include "cli/kafka_client.h"
#include "cli/topic_description.h"
#include "cli/wire_client.h"
#include "protocol/error_code.h"

namespace samsa::cli {
namespace {

constexpr int kDefaultTimeoutMs = 30000;

struct AdminSession {
  HandlePtr rk;
  QueuePtr queue;
};

Result<AdminSession> open_admin(const ClientOptions& options) {
  ASSIGN_OR_RETURN(ConfPtr conf, make_conf(options, {}));
  ASSIGN_OR_RETURN(HandlePtr rk, make_client(RD_KAFKA_PRODUCER, std::move(conf)));
  QueuePtr queue(rd_kafka_queue_new(rk.get()));
  return AdminSession{std::move(rk), std::move(queue)};
}

// Checks the per-topic results of CreateTopics/DeleteTopics; `ignore` is an
// error code that counts as success (--if-not-exists, --if-exists).
Status check_topic_results(const rd_kafka_topic_result_t** results, size_t count,
                           rd_kafka_resp_err_t ignore) {
  for (size_t i = 0; i < count; ++i) {
    rd_kafka_resp_err_t err = rd_kafka_topic_result_error(results[i]);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR || err == ignore) continue;
    const char* message = rd_kafka_topic_result_error_string(results[i]);
    return Error(ErrorKind::kIo, std::string("topic '") + rd_kafka_topic_result_name(results[i]) +
                                     "': " + rd_kafka_err2name(err) + ": " +
                                     (message ? message : rd_kafka_err2str(err)));
  }
  return ok_status();
}

Status create_topic(const ClientOptions& options, const std::string& topic, int64_t partitions,
                    int64_t replication_factor, const std::vector<std::string>& configs,
                    bool if_not_exists, int timeout_ms) {
  ASSIGN_OR_RETURN(AdminSession admin, open_admin(options));
  char errstr[512];
  rd_kafka_NewTopic_t* new_topic =
      rd_kafka_NewTopic_new(topic.c_str(), static_cast<int>(partitions),
                            static_cast<int>(replication_factor), errstr, sizeof errstr);
  if (new_topic == nullptr) return Error(ErrorKind::kInvalidArgument, errstr);
  std::unique_ptr<rd_kafka_NewTopic_t, void (*)(rd_kafka_NewTopic_t*)> owner(
      new_topic, rd_kafka_NewTopic_destroy);
  for (const std::string& config : configs) {
    ASSIGN_OR_RETURN(auto kv, split_key_value(config));
    if (rd_kafka_NewTopic_set_config(new_topic, kv.first.c_str(), kv.second.c_str()) !=
        RD_KAFKA_RESP_ERR_NO_ERROR) {
      return Error(ErrorKind::kInvalidArgument, "invalid --config " + config);
    }
  }
  ASSIGN_OR_RETURN(AdminOptionsPtr admin_options,
                   make_admin_options(admin.rk.get(), RD_KAFKA_ADMIN_OP_CREATETOPICS, timeout_ms));
  rd_kafka_CreateTopics(admin.rk.get(), &new_topic, 1, admin_options.get(), admin.queue.get());
  ASSIGN_OR_RETURN(EventPtr event, wait_admin_result(admin.queue.get(), timeout_ms));
  const rd_kafka_CreateTopics_result_t* result = rd_kafka_event_CreateTopics_result(event.get());
  if (result == nullptr) return Error(ErrorKind::kIo, "unexpected admin result");
  size_t count = 0;
  const rd_kafka_topic_result_t** results = rd_kafka_CreateTopics_result_topics(result, &count);
  return check_topic_results(results, count,
                             if_not_exists ? RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS
                                           : RD_KAFKA_RESP_ERR_NO_ERROR);
}

Status delete_topic(const ClientOptions& options, const std::string& topic, bool if_exists,
                    int timeout_ms) {
  ASSIGN_OR_RETURN(AdminSession admin, open_admin(options));
  rd_kafka_DeleteTopic_t* del = rd_kafka_DeleteTopic_new(topic.c_str());
  std::unique_ptr<rd_kafka_DeleteTopic_t, void (*)(rd_kafka_DeleteTopic_t*)> owner(
      del, rd_kafka_DeleteTopic_destroy);
  ASSIGN_OR_RETURN(AdminOptionsPtr admin_options,
                   make_admin_options(admin.rk.get(), RD_KAFKA_ADMIN_OP_DELETETOPICS, timeout_ms));
  rd_kafka_DeleteTopics(admin.rk.get(), &del, 1, admin_options.get(), admin.queue.get());
  ASSIGN_OR_RETURN(EventPtr event, wait_admin_result(admin.queue.get(), timeout_ms));
  const rd_kafka_DeleteTopics_result_t* result = rd_kafka_event_DeleteTopics_result(event.get());
  if (result == nullptr) return Error(ErrorKind::kIo, "unexpected admin result");
  size_t count = 0;
  const rd_kafka_topic_result_t** results = rd_kafka_DeleteTopics_result_topics(result, &count);
  return check_topic_results(results, count,
                             if_exists ? RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART
                                       : RD_KAFKA_RESP_ERR_NO_ERROR);
}

bool is_internal(std::string_view topic) { return topic.starts_with("__"); }

// Topic descriptions from Metadata, for one topic or (empty name) all of them.
Result<std::vector<TopicDescription>> describe_from_metadata(rd_kafka_t* rk,
                                                             const std::string& only,
                                                             int timeout_ms) {
  ASSIGN_OR_RETURN(MetadataPtr md, fetch_metadata(rk, timeout_ms));
  std::vector<TopicDescription> topics;
  for (int t = 0; t < md->topic_cnt; ++t) {
    const rd_kafka_metadata_topic_t& mt = md->topics[t];
    if (!only.empty() && only != mt.topic) continue;
    if (mt.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return Error(ErrorKind::kIo, std::string("topic '") + mt.topic + "': " + rd_kafka_err2str(mt.err));
    }
    TopicDescription desc;
    desc.name = mt.topic;
    for (int p = 0; p < mt.partition_cnt; ++p) {
      const rd_kafka_metadata_partition_t& mp = mt.partitions[p];
      desc.partitions.push_back({mp.id, mp.leader,
                                 std::vector<int32_t>(mp.replicas, mp.replicas + mp.replica_cnt),
                                 std::vector<int32_t>(mp.isrs, mp.isrs + mp.isr_cnt)});
    }
    topics.push_back(std::move(desc));
  }
  if (!only.empty() && topics.empty()) {
    return Error(ErrorKind::kNotFound, "topic '" + only + "' does not exist");
  }
  std::sort(topics.begin(), topics.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return topics;
}

// The topics of one Metadata answer over the wire (v9+: offline replicas,
// v10+: topic ids, which librdkafka 2.0 does not report), for one topic or
// (empty name) all of them; the live brokers go to `live_brokers`.
Result<std::vector<TopicDescription>> describe_over_wire(const ClientOptions& options, const std::string& only,
                                                         int timeout_ms, std::set<int32_t>& live_brokers) {
  ASSIGN_OR_RETURN(std::vector<HostPort> addresses, parse_host_port_list(options.bootstrap_server));
  ASSIGN_OR_RETURN(WireClient client, WireClient::connect_any(addresses, timeout_ms));
  ASSIGN_OR_RETURN(ClusterMetadata metadata, fetch_cluster_metadata(client));
  live_brokers = live_broker_ids(metadata);
  for (const TopicError& e : metadata.topic_errors) {
    if (!only.empty() && e.topic != only) continue;
    std::string message = "topic '" + e.topic + "': " + protocol::error_name(e.error_code);
    if (!only.empty()) return Error(ErrorKind::kIo, message);
    std::fprintf(stderr, "samsa topic describe: warning: %s\n", message.c_str());
  }
  std::vector<TopicDescription> topics;
  for (TopicDescription& t : metadata.topics) {
    if (only.empty() || t.name == only) topics.push_back(std::move(t));
  }
  if (!only.empty() && topics.empty()) {
    return Error(ErrorKind::kNotFound, "topic '" + only + "' does not exist");
  }
  return topics;
}

// Fills in each topic's non-default configs and its min.insync.replicas
// (DescribeConfigs).
Status add_configs(AdminSession& admin, std::vector<TopicDescription>& topics, int timeout_ms) {
  if (topics.empty()) return ok_status();
  std::vector<rd_kafka_ConfigResource_t*> resources;
  for (const TopicDescription& t : topics) {
    resources.push_back(rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, t.name.c_str()));
  }
  auto release = [&resources] {
    for (auto* r : resources) rd_kafka_ConfigResource_destroy(r);
  };
  auto options = make_admin_options(admin.rk.get(), RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS, timeout_ms);
  if (!options.ok()) {
    release();
    return options.error();
  }
  rd_kafka_DescribeConfigs(admin.rk.get(), resources.data(), resources.size(), options->get(),
                           admin.queue.get());
  release();
  ASSIGN_OR_RETURN(EventPtr event, wait_admin_result(admin.queue.get(), timeout_ms));
  const rd_kafka_DescribeConfigs_result_t* result =
      rd_kafka_event_DescribeConfigs_result(event.get());
  if (result == nullptr) return Error(ErrorKind::kIo, "unexpected admin result");
  size_t count = 0;
  const rd_kafka_ConfigResource_t** described = rd_kafka_DescribeConfigs_result_resources(result, &count);
  for (size_t i = 0; i < count; ++i) {
    if (rd_kafka_ConfigResource_error(described[i]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return Error(ErrorKind::kIo, std::string("configs of '") +
                                       rd_kafka_ConfigResource_name(described[i]) +
                                       "': " + rd_kafka_ConfigResource_error_string(described[i]));
    }
    auto it = std::find_if(topics.begin(), topics.end(), [&](const TopicDescription& t) {
      return t.name == rd_kafka_ConfigResource_name(described[i]);
    });
    if (it == topics.end()) continue;
    size_t entry_count = 0;
    const rd_kafka_ConfigEntry_t** entries = rd_kafka_ConfigResource_configs(described[i], &entry_count);
    for (size_t e = 0; e < entry_count; ++e) {
      const char* name = rd_kafka_ConfigEntry_name(entries[e]);
      const char* value = rd_kafka_ConfigEntry_value(entries[e]);
      // The effective value, default or not: --under-min-isr-partitions compares with it.
      if (value && std::strcmp(name, "min.insync.replicas") == 0) it->min_insync_replicas = std::atoi(value);
      // Like kafka-topics.sh: everything not at its built-in default.
      if (rd_kafka_ConfigEntry_is_default(entries[e])) continue;
      it->configs.emplace_back(name, value ? value : "null");
    }
    std::sort(it->configs.begin(), it->configs.end());
  }
  return ok_status();
}

struct TopicArgs {
  ClientOptions client;
  std::string topic;
  int64_t partitions = -1;
  int64_t replication_factor = -1;
  std::vector<std::string> configs;
  bool if_exists = false;
  bool exclude_internal = false;
  int64_t timeout_ms = kDefaultTimeoutMs;
};

void add_common(ArgParser& parser, TopicArgs& args) {
  args.client.add_to(parser);
  parser.add_int("timeout-ms", "MS", "How long to wait for the broker (default 30000)",
                 &args.timeout_ms, 1, 3600 * 1000);
}

int topic_create(int argc, char** argv) {
  TopicArgs args;
  ArgParser parser("samsa topic create", "Create a topic.");
  parser.add_string("topic", 't', "TOPIC", "Name of the topic to create", &args.topic);
  parser.add_int("partitions", "N", "Number of partitions (default: the broker's num.partitions)",
                 &args.partitions, 1, 1000000);
  parser.add_int("replication-factor", "R",
                 "Replicas per partition (default: the broker's default.replication.factor)",
                 &args.replication_factor, 1, 1000);
  parser.add_list("config", 'c', "KEY=VALUE", "Topic config override, e.g. retention.ms=60000",
                  &args.configs);
  parser.add_flag("if-not-exists", 0, "Succeed if the topic already exists", &args.if_exists);
  add_common(parser, args);
  parser.require("topic");
  parser.set_epilog("Example:\n  samsa topic create --topic events --partitions 3 --config retention.ms=86400000");
  if (auto outcome = parser.parse(argc, argv); outcome != ParseOutcome::kOk) {
    return outcome == ParseOutcome::kHelp ? 0 : kUsageExitCode;
  }
  Status status = create_topic(args.client, args.topic, args.partitions, args.replication_factor,
                               args.configs, args.if_exists, static_cast<int>(args.timeout_ms));
  if (!status.ok()) return report_failure("topic create", status.error().message());
  std::printf("Created topic %s.\n", args.topic.c_str());
  return 0;
}

int topic_delete(int argc, char** argv) {
  TopicArgs args;
  ArgParser parser("samsa topic delete", "Delete a topic and all its data.");
  parser.add_string("topic", 't', "TOPIC", "Name of the topic to delete", &args.topic);
  parser.add_flag("if-exists", 0, "Succeed if the topic does not exist", &args.if_exists);
  add_common(parser, args);
  parser.require("topic");
  if (auto outcome = parser.parse(argc, argv); outcome != ParseOutcome::kOk) {
    return outcome == ParseOutcome::kHelp ? 0 : kUsageExitCode;
  }
  Status status =
      delete_topic(args.client, args.topic, args.if_exists, static_cast<int>(args.timeout_ms));
  if (!status.ok()) return report_failure("topic delete", status.error().message());
  std::printf("Deleted topic %s.\n", args.topic.c_str());
  return 0;
}

int topic_list(int argc, char** argv) {
  TopicArgs args;
  ArgParser parser("samsa topic list", "List topic names, one per line, sorted.");
  parser.add_flag("exclude-internal", 0, "Leave out internal topics (names starting with __)",
                  &args.exclude_internal);
  add_common(parser, args);
  if (auto outcome = parser.parse(argc, argv); outcome != ParseOutcome::kOk) {
    return outcome == ParseOutcome::kHelp ? 0 : kUsageExitCode;
  }
  auto admin = open_admin(args.client);
  if (!admin.ok()) return report_failure("topic list", admin.error().message());
  auto topics = describe_from_metadata(admin->rk.get(), "", static_cast<int>(args.timeout_ms));
  if (!topics.ok()) return report_failure("topic list", topics.error().message());
  for (const TopicDescription& t : *topics) {
    if (args.exclude_internal && is_internal(t.name)) continue;
    std::printf("%s\n", t.name.c_str());
  }
  return 0;
}

int topic_describe(int argc, char** argv) {
  TopicArgs args;
  ReplicationReports reports;
  ArgParser parser("samsa topic describe",
                   "Describe one topic (--topic) or all topics: partitions, leaders, replicas,\n"
                   "in-sync and offline replicas and the configs that differ from the defaults.\n"
                   "With a report flag, only the partitions it selects (any of the flags given).");
  parser.add_string("topic", 't', "TOPIC", "Topic to describe (default: all)", &args.topic);
  parser.add_flag("exclude-internal", 0, "Leave out internal topics (names starting with __)",
                  &args.exclude_internal);
  parser.add_flag("under-replicated-partitions", 0, "Only partitions with fewer in-sync replicas than replicas",
                  &reports.under_replicated);
  parser.add_flag("under-min-isr-partitions", 0,
                  "Only partitions without a leader or with fewer in-sync replicas than min.insync.replicas",
                  &reports.under_min_isr);
  parser.add_flag("at-min-isr-partitions", 0, "Only partitions whose in-sync replicas equal min.insync.replicas",
                  &reports.at_min_isr);
  parser.add_flag("unavailable-partitions", 0, "Only partitions whose leader is none or not a live broker",
                  &reports.unavailable);
  add_common(parser, args);
  if (auto outcome = parser.parse(argc, argv); outcome != ParseOutcome::kOk) {
    return outcome == ParseOutcome::kHelp ? 0 : kUsageExitCode;
  }
  int timeout_ms = static_cast<int>(args.timeout_ms);
  std::set<int32_t> live_brokers;
  auto topics = describe_over_wire(args.client, args.topic, timeout_ms, live_brokers);
  if (!topics.ok()) return report_failure("topic describe", topics.error().message());
  if (args.exclude_internal) {
    std::erase_if(*topics, [](const TopicDescription& t) { return is_internal(t.name); });
  }
  auto admin = open_admin(args.client);
  if (!admin.ok()) return report_failure("topic describe", admin.error().message());
  if (Status s = add_configs(*admin, *topics, timeout_ms); !s.ok()) {
    // min.insync.replicas is what those reports compare with: no answer without it.
    if (reports.needs_min_isr()) return report_failure("topic describe", "configs unavailable: " + s.error().message());
    // The partition layout is still worth showing; say why configs are missing.
    std::fprintf(stderr, "samsa topic describe: warning: configs unavailable: %s\n",
                 s.error().message().c_str());
  }
  for (const TopicDescription& t : *topics) {
    if (reports.needs_min_isr() && !t.min_insync_replicas) {
      return report_failure("topic describe", "topic '" + t.name + "': min.insync.replicas unknown");
    }
    std::string text = reports.any() ? format_partition_reports(t, reports, live_brokers) : format_topic_description(t);
    std::fputs(text.c_str(), stdout);
  }
  return 0;
}

constexpr Action kActions[] = {
    {"create", "Create a topic", topic_create},
    {"list", "List topics", topic_list},
    {"describe", "Show partitions, leaders, replicas and configs", topic_describe},
    {"delete", "Delete a topic", topic_delete},
};


}  // namespace

int run_topic(int argc, char** argv) {
  return run_action_command(ActionCommand{"topic", "", "Manage topics.", kActions}, argc, argv);
}

}  // namespace samsa::cli

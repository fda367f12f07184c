// `samsa group list|describe|delete|reset-offsets`: consumer-group
// administration through librdkafka (ListGroups/DescribeGroups, OffsetFetch,
// OffsetCommit, DeleteGroups, ListOffsets), printing what Kafka's
// kafka-consumer-groups.sh prints. The group may be given as the first
// word after the action ("samsa group describe my-group") or --group.

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/byte_reader.h"
#include "cli/action_table.h"
#include "cli/commands.h"
#include "cli/kafka_client.h"

namespace samsa::cli {
namespace {

constexpr int kTimeoutMs = 30000;
using Tp = std::pair<std::string, int32_t>;

struct PartitionListDeleter {
  void operator()(rd_kafka_topic_partition_list_t* l) const { rd_kafka_topic_partition_list_destroy(l); }
};
using PartitionListPtr = std::unique_ptr<rd_kafka_topic_partition_list_t, PartitionListDeleter>;

struct Member {
  std::string id, client_id, host;
};
struct GroupView {
  std::string state;
  std::vector<Member> members;
  std::map<Tp, size_t> owner;  // partition -> index in members
};

// ConsumerProtocolAssignment: i16 version | [topic STRING, [i32]] | user data.
void parse_assignment(const void* data, int size, size_t member, GroupView& view) {
  if (!data || size <= 0) return;
  ByteReader r(ByteView(static_cast<const uint8_t*>(data), size_t(size)));
  r.read_i16();
  int32_t topics = r.read_i32();
  for (int32_t t = 0; r.ok() && t < topics; ++t) {
    int16_t len = r.read_i16();
    std::string topic(r.read_string_view(len < 0 ? 0 : size_t(len)));
    int32_t n = r.read_i32();
    for (int32_t i = 0; r.ok() && i < n; ++i) {
      int32_t p = r.read_i32();
      if (r.ok()) view.owner[{topic, p}] = member;
    }
  }
}

Result<HandlePtr> open_client(const ClientOptions& options, const std::string& group) {
  ASSIGN_OR_RETURN(ConfPtr conf, make_conf(options, {{"group.id", group.empty() ? "samsa-cli" : group},
                                                     {"enable.auto.commit", "false"}}));
  return make_client(RD_KAFKA_CONSUMER, std::move(conf));
}

Result<std::vector<std::string>> list_groups(rd_kafka_t* rk) {
  const rd_kafka_group_list* list = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_list_groups(rk, nullptr, &list, kTimeoutMs);
  if (err) return Error(ErrorKind::kIo, std::string("ListGroups: ") + rd_kafka_err2str(err));
  std::vector<std::string> names;
  for (int i = 0; i < list->group_cnt; ++i) names.push_back(list->groups[i].group);
  rd_kafka_group_list_destroy(list);
  std::sort(names.begin(), names.end());
  return names;
}

Result<GroupView> describe_group(rd_kafka_t* rk, const std::string& group) {
  const rd_kafka_group_list* list = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_list_groups(rk, group.c_str(), &list, kTimeoutMs);
  if (err) return Error(ErrorKind::kIo, std::string("DescribeGroups: ") + rd_kafka_err2str(err));
  GroupView view;
  view.state = "Dead";
  for (int i = 0; i < list->group_cnt; ++i) {
    const rd_kafka_group_info& g = list->groups[i];
    if (group != g.group) continue;
    view.state = g.state ? g.state : "";
    for (int m = 0; m < g.member_cnt; ++m) {
      const auto& info = g.members[m];
      view.members.push_back({info.member_id, info.client_id, info.client_host});
      parse_assignment(info.member_assignment, info.member_assignment_size, view.members.size() - 1, view);
    }
  }
  rd_kafka_group_list_destroy(list);
  return view;
}

// All committed offsets of the group (OffsetFetch with null topics).
Result<std::map<Tp, int64_t>> committed_offsets(rd_kafka_t* rk, const std::string& group) {
  QueuePtr queue(rd_kafka_queue_new(rk));
  rd_kafka_ListConsumerGroupOffsets_t* req = rd_kafka_ListConsumerGroupOffsets_new(group.c_str(), nullptr);
  ASSIGN_OR_RETURN(AdminOptionsPtr opts,
                   make_admin_options(rk, RD_KAFKA_ADMIN_OP_LISTCONSUMERGROUPOFFSETS, kTimeoutMs));
  rd_kafka_ListConsumerGroupOffsets(rk, &req, 1, opts.get(), queue.get());
  rd_kafka_ListConsumerGroupOffsets_destroy(req);
  ASSIGN_OR_RETURN(EventPtr ev, wait_admin_result(queue.get(), kTimeoutMs));
  size_t n = 0;
  const rd_kafka_group_result_t** groups =
      rd_kafka_ListConsumerGroupOffsets_result_groups(rd_kafka_event_ListConsumerGroupOffsets_result(ev.get()), &n);
  std::map<Tp, int64_t> out;
  for (size_t i = 0; i < n; ++i) {
    if (const rd_kafka_error_t* e = rd_kafka_group_result_error(groups[i])) {
      return Error(ErrorKind::kIo, std::string("OffsetFetch: ") + rd_kafka_error_string(e));
    }
    const rd_kafka_topic_partition_list_t* parts = rd_kafka_group_result_partitions(groups[i]);
    for (int j = 0; parts && j < parts->cnt; ++j) {
      if (parts->elems[j].offset >= 0) out[{parts->elems[j].topic, parts->elems[j].partition}] = parts->elems[j].offset;
    }
  }
  return out;
}

Result<std::pair<int64_t, int64_t>> watermarks(rd_kafka_t* rk, const Tp& tp) {
  int64_t lo = -1, hi = -1;
  rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(rk, tp.first.c_str(), tp.second, &lo, &hi, kTimeoutMs);
  if (err) return Error(ErrorKind::kIo, "ListOffsets " + tp.first + ": " + rd_kafka_err2str(err));
  return std::pair{lo, hi};
}

std::string take_group(int& argc, char**& argv, std::string group) {
  if (argc >= 2 && argv[1][0] != '-') {
    group = argv[1];
    --argc;
    ++argv;
  }
  return group;
}

int run_list(int argc, char** argv) {
  ClientOptions options;
  ArgParser parser("samsa group list", "List consumer groups (one per line).");
  options.add_to(parser);
  if (auto o = parser.parse(argc, argv); o != ParseOutcome::kOk) return o == ParseOutcome::kHelp ? 0 : kUsageExitCode;
  auto rk = open_client(options, "");
  if (!rk.ok()) return report_failure("group list", rk.error().message());
  auto names = list_groups(rk->get());
  if (!names.ok()) return report_failure("group list", names.error().message());
  for (const auto& n : *names) std::printf("%s\n", n.c_str());
  return 0;
}

int run_describe(int argc, char** argv) {
  ClientOptions options;
  std::string group = take_group(argc, argv, "");
  ArgParser parser("samsa group describe", "Per partition: committed offset, log end offset, lag, owner.");
  parser.add_string("group", 0, "GROUP", "The group (or give it as the first argument)", &group);
  options.add_to(parser);
  if (auto o = parser.parse(argc, argv); o != ParseOutcome::kOk) return o == ParseOutcome::kHelp ? 0 : kUsageExitCode;
  if (group.empty()) return report_failure("group describe", "a group is required");
  auto rk = open_client(options, group);
  if (!rk.ok()) return report_failure("group describe", rk.error().message());
  auto view = describe_group(rk->get(), group);
  if (!view.ok()) return report_failure("group describe", view.error().message());
  auto offsets = committed_offsets(rk->get(), group);
  if (!offsets.ok()) return report_failure("group describe", offsets.error().message());
  std::set<Tp> partitions;
  for (const auto& [tp, o] : *offsets) partitions.insert(tp);
  for (const auto& [tp, m] : view->owner) partitions.insert(tp);
  if (view->state == "Dead" && partitions.empty()) {
    std::fprintf(stderr, "Consumer group '%s' does not exist.\n", group.c_str());
    return 1;
  }
  if (view->members.empty()) std::printf("\nConsumer group '%s' has no active members.\n", group.c_str());
  std::printf("\n%-30s %-30s %-10s %-15s %-15s %-10s %-50s %-20s %s\n", "GROUP", "TOPIC", "PARTITION",
              "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID");
  for (const Tp& tp : partitions) {
    auto marks = watermarks(rk->get(), tp);
    std::string end = marks.ok() ? std::to_string(marks->second) : "-";
    auto c = offsets->find(tp);
    std::string current = c == offsets->end() ? "-" : std::to_string(c->second);
    std::string lag = (c != offsets->end() && marks.ok()) ? std::to_string(std::max<int64_t>(0, marks->second - c->second)) : "-";
    auto owner = view->owner.find(tp);
    const Member* m = owner == view->owner.end() ? nullptr : &view->members[owner->second];
    std::printf("%-30s %-30s %-10d %-15s %-15s %-10s %-50s %-20s %s\n", group.c_str(), tp.first.c_str(), tp.second,
                current.c_str(), end.c_str(), lag.c_str(), m ? m->id.c_str() : "-", m ? m->host.c_str() : "-",
                m ? m->client_id.c_str() : "-");
  }
  return 0;
}

int run_delete(int argc, char** argv) {
  ClientOptions options;
  std::string group = take_group(argc, argv, "");
  ArgParser parser("samsa group delete", "Delete an empty group and its committed offsets.");
  parser.add_string("group", 0, "GROUP", "The group (or give it as the first argument)", &group);
  options.add_to(parser);
  if (auto o = parser.parse(argc, argv); o != ParseOutcome::kOk) return o == ParseOutcome::kHelp ? 0 : kUsageExitCode;
  if (group.empty()) return report_failure("group delete", "a group is required");
  auto rk = open_client(options, group);
  if (!rk.ok()) return report_failure("group delete", rk.error().message());
  QueuePtr queue(rd_kafka_queue_new(rk->get()));
  rd_kafka_DeleteGroup_t* del = rd_kafka_DeleteGroup_new(group.c_str());
  auto opts = make_admin_options(rk->get(), RD_KAFKA_ADMIN_OP_DELETEGROUPS, kTimeoutMs);
  if (!opts.ok()) return report_failure("group delete", opts.error().message());
  rd_kafka_DeleteGroups(rk->get(), &del, 1, opts->get(), queue.get());
  rd_kafka_DeleteGroup_destroy(del);
  auto ev = wait_admin_result(queue.get(), kTimeoutMs);
  if (!ev.ok()) return report_failure("group delete", ev.error().message());
  size_t n = 0;
  const rd_kafka_group_result_t** results =
      rd_kafka_DeleteGroups_result_groups(rd_kafka_event_DeleteGroups_result(ev->get()), &n);
  for (size_t i = 0; i < n; ++i) {
    if (const rd_kafka_error_t* e = rd_kafka_group_result_error(results[i])) {
      return report_failure("group delete", group + ": " + rd_kafka_error_name(e) + ": " + rd_kafka_error_string(e));
    }
  }
  std::printf("Deletion of requested consumer groups ('%s') was successful.\n", group.c_str());
  return 0;
}

struct ResetSpec {
  bool earliest = false, latest = false, execute = false, all_topics = false;
  int64_t to_offset = -1, shift_by = 0, to_timestamp = -1;
  std::string to_datetime;
  std::vector<std::string> topics;
};

// "YYYY-MM-DDTHH:MM:SS[.sss]" in UTC -> epoch ms.
std::optional<int64_t> parse_datetime(const std::string& text) {
  std::tm tm{};
  const char* rest = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (!rest) return std::nullopt;
  int64_t ms = int64_t(timegm(&tm)) * 1000;
  if (*rest == '.') ms += std::atoi(rest + 1);
  return ms;
}

Result<std::vector<Tp>> reset_targets(rd_kafka_t* rk, const ResetSpec& spec, const std::map<Tp, int64_t>& committed) {
  std::vector<Tp> out;
  if (spec.all_topics) {
    for (const auto& [tp, o] : committed) out.push_back(tp);
    return out;
  }
  ASSIGN_OR_RETURN(MetadataPtr md, fetch_metadata(rk, kTimeoutMs));
  for (const std::string& spec_topic : spec.topics) {
    size_t colon = spec_topic.find(':');
    std::string topic = spec_topic.substr(0, colon);
    if (colon != std::string::npos) {
      std::string list = spec_topic.substr(colon + 1);
      for (size_t pos = 0; pos <= list.size();) {
        size_t comma = list.find(',', pos);
        if (comma == std::string::npos) comma = list.size();
        out.push_back({topic, std::atoi(list.substr(pos, comma - pos).c_str())});
        pos = comma + 1;
      }
      continue;
    }
    bool found = false;
    for (int i = 0; i < md->topic_cnt; ++i) {
      if (topic != md->topics[i].topic) continue;
      found = true;
      for (int p = 0; p < md->topics[i].partition_cnt; ++p) out.push_back({topic, md->topics[i].partitions[p].id});
    }
    if (!found) return Error(ErrorKind::kNotFound, "unknown topic " + topic);
  }
  return out;
}

Result<int64_t> new_offset(rd_kafka_t* rk, const ResetSpec& spec, const Tp& tp, std::optional<int64_t> current) {
  ASSIGN_OR_RETURN(auto marks, watermarks(rk, tp));
  int64_t target = marks.second;
  if (spec.earliest) {
    target = marks.first;
  } else if (spec.latest) {
    target = marks.second;
  } else if (spec.to_offset >= 0) {
    target = spec.to_offset;
  } else if (spec.to_timestamp >= 0) {
    PartitionListPtr list(rd_kafka_topic_partition_list_new(1));
    rd_kafka_topic_partition_list_add(list.get(), tp.first.c_str(), tp.second)->offset = spec.to_timestamp;
    rd_kafka_resp_err_t err = rd_kafka_offsets_for_times(rk, list.get(), kTimeoutMs);
    if (err) return Error(ErrorKind::kIo, std::string("ListOffsets by time: ") + rd_kafka_err2str(err));
    target = list->elems[0].offset < 0 ? marks.second : list->elems[0].offset;
  } else {
    target = current.value_or(marks.second) + spec.shift_by;
  }
  return std::clamp(target, marks.first, marks.second);  // as Kafka: within the log
}

Status alter_offsets(rd_kafka_t* rk, const std::string& group, const std::vector<std::pair<Tp, int64_t>>& offsets) {
  PartitionListPtr list(rd_kafka_topic_partition_list_new(int(offsets.size())));
  for (const auto& [tp, o] : offsets) rd_kafka_topic_partition_list_add(list.get(), tp.first.c_str(), tp.second)->offset = o;
  QueuePtr queue(rd_kafka_queue_new(rk));
  rd_kafka_AlterConsumerGroupOffsets_t* req = rd_kafka_AlterConsumerGroupOffsets_new(group.c_str(), list.get());
  ASSIGN_OR_RETURN(AdminOptionsPtr opts, make_admin_options(rk, RD_KAFKA_ADMIN_OP_ALTERCONSUMERGROUPOFFSETS, kTimeoutMs));
  rd_kafka_AlterConsumerGroupOffsets(rk, &req, 1, opts.get(), queue.get());
  rd_kafka_AlterConsumerGroupOffsets_destroy(req);
  ASSIGN_OR_RETURN(EventPtr ev, wait_admin_result(queue.get(), kTimeoutMs));
  size_t n = 0;
  const rd_kafka_group_result_t** groups =
      rd_kafka_AlterConsumerGroupOffsets_result_groups(rd_kafka_event_AlterConsumerGroupOffsets_result(ev.get()), &n);
  for (size_t i = 0; i < n; ++i) {
    if (const rd_kafka_error_t* e = rd_kafka_group_result_error(groups[i])) {
      return Error(ErrorKind::kIo, std::string("OffsetCommit: ") + rd_kafka_error_string(e));
    }
    const rd_kafka_topic_partition_list_t* parts = rd_kafka_group_result_partitions(groups[i]);
    for (int j = 0; parts && j < parts->cnt; ++j) {
      if (parts->elems[j].err) {
        return Error(ErrorKind::kIo, std::string("OffsetCommit ") + parts->elems[j].topic + ": " +
                                         rd_kafka_err2str(parts->elems[j].err));
      }
    }
  }
  return ok_status();
}

int run_reset(int argc, char** argv) {
  ClientOptions options;
  ResetSpec spec;
  std::string group = take_group(argc, argv, "");
  ArgParser parser("samsa group reset-offsets",
                   "Compute new committed offsets; prints them (dry run) unless --execute.");
  parser.add_string("group", 0, "GROUP", "The group (or give it as the first argument)", &group);
  parser.add_list("topic", 0, "TOPIC[:P,P]", "Topic (all partitions, or the listed ones); repeatable", &spec.topics);
  parser.add_flag("all-topics", 0, "Every topic the group has committed offsets for", &spec.all_topics);
  parser.add_flag("to-earliest", 0, "Reset to the log start", &spec.earliest);
  parser.add_flag("to-latest", 0, "Reset to the log end", &spec.latest);
  parser.add_int("to-offset", "OFFSET", "Reset to this offset", &spec.to_offset, 0, INT64_MAX);
  parser.add_string("to-datetime", 0, "YYYY-MM-DDTHH:MM:SS.sss", "Reset to the first record at/after (UTC)",
                    &spec.to_datetime);
  parser.add_int("to-timestamp", "MS", "Reset to the first record at/after this epoch ms", &spec.to_timestamp, 0,
                 INT64_MAX);
  parser.add_int("shift-by", "N", "Move the committed offset by N (may be negative)", &spec.shift_by, INT64_MIN,
                 INT64_MAX);
  parser.add_flag("execute", 0, "Commit the new offsets (the group must have no active members)", &spec.execute);
  options.add_to(parser);
  if (auto o = parser.parse(argc, argv); o != ParseOutcome::kOk) return o == ParseOutcome::kHelp ? 0 : kUsageExitCode;
  if (group.empty()) return report_failure("group reset-offsets", "a group is required");
  if (!spec.to_datetime.empty()) {
    auto ms = parse_datetime(spec.to_datetime);
    if (!ms) return report_failure("group reset-offsets", "bad --to-datetime " + spec.to_datetime);
    spec.to_timestamp = *ms;
  }
  int modes = int(spec.earliest) + int(spec.latest) + int(spec.to_offset >= 0) + int(spec.to_timestamp >= 0) +
              int(spec.shift_by != 0);
  if (modes != 1) return report_failure("group reset-offsets", "give exactly one of the --to-* / --shift-by options");
  if (spec.topics.empty() == !spec.all_topics) return report_failure("group reset-offsets", "give --topic or --all-topics");
  auto rk = open_client(options, group);
  if (!rk.ok()) return report_failure("group reset-offsets", rk.error().message());
  auto committed = committed_offsets(rk->get(), group);
  if (!committed.ok()) return report_failure("group reset-offsets", committed.error().message());
  auto targets = reset_targets(rk->get(), spec, *committed);
  if (!targets.ok()) return report_failure("group reset-offsets", targets.error().message());
  std::vector<std::pair<Tp, int64_t>> plan;
  for (const Tp& tp : *targets) {
    auto c = committed->find(tp);
    auto o = new_offset(rk->get(), spec, tp, c == committed->end() ? std::nullopt : std::optional(c->second));
    if (!o.ok()) return report_failure("group reset-offsets", o.error().message());
    plan.push_back({tp, *o});
  }
  std::printf("\n%-30s %-30s %-10s %s\n", "GROUP", "TOPIC", "PARTITION", "NEW-OFFSET");
  for (const auto& [tp, o] : plan) {
    std::printf("%-30s %-30s %-10d %lld\n", group.c_str(), tp.first.c_str(), tp.second, static_cast<long long>(o));
  }
  if (!spec.execute) return 0;
  Status done = alter_offsets(rk->get(), group, plan);
  if (!done.ok()) return report_failure("group reset-offsets", done.error().message());
  return 0;
}

constexpr Action kActions[] = {
    {"list", "List consumer groups", run_list},
    {"describe", "Show offsets, log end offsets, lag and owners per partition", run_describe},
    {"delete", "Delete an empty group and its offsets", run_delete},
    {"reset-offsets", "Move committed offsets (dry run unless --execute)", run_reset},
};


}  // namespace

int run_group(int argc, char** argv) {
  return run_action_command(ActionCommand{"group", "[GROUP] ", nullptr, kActions}, argc, argv);
}

}  // namespace samsa::cli

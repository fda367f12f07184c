// DescribeLogDirs (v1-4, the versions Kafka 4.x serves): for every log dir
// of this broker, the partitions stored there with their size on disk, as
// Kafka's ReplicaManager.describeLogDirs answers:
// - Topics null = every partition; otherwise only the listed ones. A topic
//   with a log in the dir appears even when none of its listed partitions
//   do (with no partitions), as in Kafka.
// - OffsetLag is max(high watermark - log end, 0): 0 for a current log
//   (Samsa has no future logs, AlterReplicaLogDirs, so IsFutureKey is false).
// - v4: TotalBytes / UsableBytes of the dir's file system
//   (FileSystem::space: statvfs); -1 when unknown.
// - LogDir is the dir as configured, in normal form; `samsa server` makes
//   the configured dirs absolute at startup (server/run_server.cc), as
//   Kafka's LogManager does.
// The metadata log (__cluster_metadata) is not a partition log and is not
// listed, as in Kafka.
#include <filesystem>
#include <map>
#include <set>

#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/request.h"
#include "protocol/generated/describe_log_dirs.h"

namespace samsa {
namespace {

namespace fs = std::filesystem;
using protocol::DescribeLogDirsRequest;
using protocol::DescribeLogDirsResponse;
using DirResult = DescribeLogDirsResponse::DescribeLogDirsResult;

// The partitions asked for; nullopt = all.
using Wanted = std::optional<std::set<TopicPartition>>;

Wanted wanted_partitions(const DescribeLogDirsRequest& body) {
  if (!body.topics) return std::nullopt;
  std::set<TopicPartition> out;
  for (const auto& topic : *body.topics) {
    for (int32_t p : topic.partitions) out.insert({topic.topic, PartitionId(p)});
  }
  return out;
}

int64_t partition_offset_lag(Broker& broker, const Log& log) {
  Partition* partition = broker.replicas().get(log.topic_partition());
  if (!partition) return 0;
  int64_t lag = partition->high_watermark().value() - log.log_end_offset().value();
  return lag > 0 ? lag : 0;
}

// A dir's normal form without a trailing separator, so that a configured
// "/data/" and a log's parent "/data" compare equal (path values only).
fs::path normal_dir(const fs::path& dir) {
  fs::path normal = dir.lexically_normal();
  return normal.has_filename() ? normal : normal.parent_path();
}

void fill_space(FileSystem& files, DirResult& out, const fs::path& dir) {
  auto space = files.space(dir);
  if (!space.ok()) return;  // stays -1
  out.total_bytes = space->capacity_bytes;
  out.usable_bytes = space->available_bytes;
}

DirResult describe_dir(Broker& broker, const fs::path& dir, const std::vector<Log*>& logs, const Wanted& wanted) {
  DirResult out;
  fs::path normal = normal_dir(dir);
  out.log_dir = normal.string();
  // By topic name, each topic once, partitions in index order.
  std::map<std::string, std::map<int32_t, const Log*>> by_topic;
  for (const Log* log : logs) {
    if (normal_dir(log->dir().parent_path()) != normal) continue;
    const TopicPartition& tp = log->topic_partition();
    auto& partitions = by_topic[tp.topic];
    if (!wanted || wanted->contains(tp)) partitions[tp.partition.value()] = log;
  }
  for (const auto& [name, partitions] : by_topic) {
    DescribeLogDirsResponse::DescribeLogDirsTopic topic;
    topic.name = name;
    for (const auto& [index, log] : partitions) {
      DescribeLogDirsResponse::DescribeLogDirsPartition p;
      p.partition_index = index;
      p.partition_size = log->size_bytes();
      p.offset_lag = partition_offset_lag(broker, *log);
      p.is_future_key = false;
      topic.partitions.push_back(std::move(p));
    }
    out.topics.push_back(std::move(topic));
  }
  fill_space(broker.files(), out, dir);
  return out;
}

}  // namespace

void handle_describe_log_dirs(Broker& broker, Request& request) {
  DescribeLogDirsRequest body;
  if (!request.decode(body)) return;
  Wanted wanted = wanted_partitions(body);
  LogManager& logs = broker.replicas().logs();
  std::vector<Log*> all = logs.all();
  DescribeLogDirsResponse response;
  for (const fs::path& dir : logs.log_dirs()) response.results.push_back(describe_dir(broker, dir, all, wanted));
  request.respond(response);
}

}  // namespace samsa

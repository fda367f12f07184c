// DescribeTopicPartitions (v0, KIP-966): topics and their partitions, as
// Metadata describes them, in pages, as Kafka's
// DescribeTopicPartitionsRequestHandler answers:
// - no topics listed = every topic; the answer is sorted by topic name;
// - Cursor (topic, partition) = where to start: topics sorted before it are
//   skipped, and the cursor topic starts at its partition index;
// - at most ResponsePartitionLimit partitions (clamped to 1..2000, Kafka's
//   max.request.partition.size.limit default); when more remain, NextCursor
//   names the first partition not answered;
// - a listed topic that does not exist: UNKNOWN_TOPIC_OR_PARTITION;
// - every topic carries its authorized operations (no authorizer: all of
//   TOPIC's, broker/authorized_operations.h); ELR lists are empty (no ELR).
#include <algorithm>
#include <set>

#include "broker/authorized_operations.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/request.h"
#include "controller/topic_rules.h"
#include "protocol/error_code.h"
#include "protocol/generated/describe_topic_partitions.h"

namespace samsa {
namespace {

using protocol::DescribeTopicPartitionsRequest;
using protocol::DescribeTopicPartitionsResponse;
using protocol::ErrorCode;
using ResponseTopic = DescribeTopicPartitionsResponse::DescribeTopicPartitionsResponseTopic;
using ResponsePartition = DescribeTopicPartitionsResponse::DescribeTopicPartitionsResponsePartition;

constexpr int32_t kMaxPartitionLimit = 2000;

std::vector<int32_t> node_ids(const std::vector<NodeId>& ids) {
  std::vector<int32_t> out;
  out.reserve(ids.size());
  for (NodeId id : ids) out.push_back(id.value());
  return out;
}

ResponsePartition describe_partition(const PartitionState& p) {
  ResponsePartition out;
  out.partition_index = p.partition.value();
  out.leader_id = p.leader.value();
  out.leader_epoch = p.leader_epoch.value();
  out.replica_nodes = node_ids(p.replicas);
  out.isr_nodes = node_ids(p.isr);
  out.eligible_leader_replicas = node_ids(p.elr);  // KIP-966
  out.last_known_elr = node_ids(p.last_known_elr);
  if (p.leader == kNoNode) out.error_code = int16_t(ErrorCode::kLeaderNotAvailable);
  return out;
}

// The topic names to answer, sorted, from the cursor's topic on.
std::set<std::string> names_to_describe(const Broker& broker, const DescribeTopicPartitionsRequest& body) {
  std::set<std::string> names;
  if (body.topics.empty()) {
    for (const auto& [name, topic] : broker.image().topics()) names.insert(name);
  } else {
    for (const auto& t : body.topics) names.insert(t.name);
  }
  if (body.cursor) names.erase(names.begin(), names.lower_bound(body.cursor->topic_name));
  return names;
}

}  // namespace

void handle_describe_topic_partitions(Broker& broker, Request& request) {
  DescribeTopicPartitionsRequest body;
  if (!request.decode(body)) return;
  int32_t budget = std::clamp(body.response_partition_limit, 1, kMaxPartitionLimit);
  DescribeTopicPartitionsResponse response;
  for (const std::string& name : names_to_describe(broker, body)) {
    ResponseTopic out;
    out.name = name;
    out.topic_authorized_operations = kTopicOperations;
    const TopicState* topic = broker.image().topic(name);
    if (!topic) {
      out.error_code = int16_t(ErrorCode::kUnknownTopicOrPartition);
      response.topics.push_back(std::move(out));
      continue;
    }
    if (budget == 0) {  // the previous topic used the last of the budget
      response.next_cursor.emplace();
      response.next_cursor->topic_name = name;
      response.next_cursor->partition_index = 0;
      break;
    }
    out.topic_id = topic->id;
    out.is_internal = is_internal_topic(name);
    bool cursor_topic = body.cursor && body.cursor->topic_name == name;
    int32_t first = cursor_topic ? std::max(body.cursor->partition_index, 0) : 0;
    for (const PartitionState& p : topic->partitions) {
      if (p.partition.value() < first) continue;
      if (budget == 0) {
        response.next_cursor.emplace();
        response.next_cursor->topic_name = name;
        response.next_cursor->partition_index = p.partition.value();
        break;
      }
      out.partitions.push_back(describe_partition(p));
      --budget;
    }
    response.topics.push_back(std::move(out));
    if (response.next_cursor) break;
  }
  request.respond(response);
}

}  // namespace samsa

// ListOffsets: earliest (-2), latest (-1), or the first offset whose
// timestamp is at or after a time, per partition. Latest is the high
// watermark: what a consumer can read.
#include "base/log.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/request.h"
#include "protocol/error_code.h"
#include "protocol/generated/list_offsets.h"

namespace samsa {
namespace {

using protocol::ErrorCode;
using protocol::ListOffsetsRequest;
using protocol::ListOffsetsResponse;
using PartitionResponse = ListOffsetsResponse::ListOffsetsPartitionResponse;

constexpr int64_t kLatestTimestamp = -1;
constexpr int64_t kEarliestTimestamp = -2;

PartitionResponse error_response(int32_t index, ErrorCode code) {
  PartitionResponse out;
  out.partition_index = index;
  out.error_code = int16_t(code);
  return out;
}

PartitionResponse list_partition(Broker& broker, const std::string& topic,
                                 const ListOffsetsRequest::ListOffsetsPartition& request, int16_t version) {
  Partition* p = broker.replicas().get(TopicPartition{topic, PartitionId(request.partition_index)});
  if (!p) return error_response(request.partition_index, ErrorCode::kUnknownTopicOrPartition);
  if (!p->is_leader()) return error_response(request.partition_index, ErrorCode::kNotLeaderOrFollower);
  if (request.current_leader_epoch >= 0 && request.current_leader_epoch != p->leader_epoch().value()) {
    return error_response(request.partition_index, request.current_leader_epoch < p->leader_epoch().value()
                                                       ? ErrorCode::kFencedLeaderEpoch
                                                       : ErrorCode::kUnknownLeaderEpoch);
  }
  PartitionResponse out;
  out.partition_index = request.partition_index;
  out.leader_epoch = p->leader_epoch().value();
  if (request.timestamp == kLatestTimestamp) {
    out.offset = p->high_watermark().value();
  } else if (request.timestamp == kEarliestTimestamp) {
    out.offset = p->log().log_start_offset().value();
  } else if (request.timestamp < 0) {
    return error_response(request.partition_index, ErrorCode::kUnsupportedVersion);
  } else {
    auto found = p->log().offset_for_timestamp(request.timestamp);
    if (!found.ok()) {
      LOG_WARN("list-offsets", "{}-{}: {}", topic, request.partition_index, found.error().to_string());
      return error_response(request.partition_index, ErrorCode::kKafkaStorageError);
    }
    if (found->has_value() && (*found)->offset < p->high_watermark()) {
      out.timestamp = (*found)->timestamp;
      out.offset = (*found)->offset.value();
    }
  }
  if (version == 0) out.old_style_offsets = {out.offset};
  return out;
}

}  // namespace

void handle_list_offsets(Broker& broker, Request& request) {
  ListOffsetsRequest body;
  if (!request.decode(body)) return;
  ListOffsetsResponse response;
  for (const auto& topic : body.topics) {
    ListOffsetsResponse::ListOffsetsTopicResponse out;
    out.name = topic.name;
    for (const auto& partition : topic.partitions) {
      out.partitions.push_back(list_partition(broker, topic.name, partition, request.version()));
    }
    response.topics.push_back(std::move(out));
  }
  request.respond(response);
}

}  // namespace samsa

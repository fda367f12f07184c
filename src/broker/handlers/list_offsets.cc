// ListOffsets: earliest (-2), latest (-1), max timestamp (-3, v7+),
// earliest local (-4, v8+), latest tiered (-5, v9+), or the first offset
// whose timestamp is at or after a time, per partition. Latest is the high
// watermark: what a consumer can read (the last stable offset for
// isolation_level=1, read_committed). Without tiered storage the local log
// is the whole log (Kafka's answers when remote storage is off: -4 is the log
// start offset, -5 is offset -1). v10's TimeoutMs bounds remote lookups, of
// which there are none.
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
constexpr int64_t kMaxTimestamp = -3;          // KIP-734, v7+
constexpr int64_t kEarliestLocalTimestamp = -4;  // KIP-405, v8+
constexpr int64_t kLatestTieredTimestamp = -5;   // KIP-1005, v9+

// The first version that may ask for a special (negative) timestamp; lower
// versions asking for it get UNSUPPORTED_VERSION (a client that needs it
// sends at least that version). 0 for -1 and -2; -1 if unknown.
int16_t first_version_for(int64_t timestamp) {
  switch (timestamp) {
    case kLatestTimestamp:
    case kEarliestTimestamp: return 0;
    case kMaxTimestamp: return 7;
    case kEarliestLocalTimestamp: return 8;
    case kLatestTieredTimestamp: return 9;
    default: return -1;
  }
}

PartitionResponse error_response(int32_t index, ErrorCode code) {
  PartitionResponse out;
  out.partition_index = index;
  out.error_code = int16_t(code);
  return out;
}

constexpr int8_t kReadCommitted = 1;

PartitionResponse list_partition(Broker& broker, const std::string& topic,
                                 const ListOffsetsRequest::ListOffsetsPartition& request, int16_t version,
                                 int8_t isolation_level) {
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
  if (request.timestamp < 0) {
    int16_t first = first_version_for(request.timestamp);
    if (first < 0 || version < first) return error_response(request.partition_index, ErrorCode::kUnsupportedVersion);
  }
  // What the consumer may read: below the HW, and for read_committed below
  // the last stable offset (Kafka's fetchOffsetForTimestamp).
  const Offset visible_end = isolation_level == kReadCommitted ? p->last_stable_offset() : p->high_watermark();
  std::optional<TimestampOffset> found;  // a record found by its timestamp
  if (request.timestamp == kLatestTimestamp) {
    out.offset = visible_end.value();
  } else if (request.timestamp == kEarliestTimestamp || request.timestamp == kEarliestLocalTimestamp) {
    out.offset = p->log().log_start_offset().value();
  } else if (request.timestamp == kLatestTieredTimestamp) {
    out.offset = -1;  // nothing is tiered
  } else {
    auto lookup = request.timestamp == kMaxTimestamp ? p->log().offset_of_max_timestamp()
                                                     : p->log().offset_for_timestamp(request.timestamp);
    if (!lookup.ok()) {
      LOG_WARN("list-offsets", "{}-{}: {}", topic, request.partition_index, lookup.error().to_string());
      return error_response(request.partition_index, ErrorCode::kKafkaStorageError);
    }
    found = *lookup;
  }
  // A consumer sees only records below the visible end; otherwise the
  // answer is -1/-1.
  if (found && found->offset < visible_end) {
    out.timestamp = found->timestamp;
    out.offset = found->offset.value();
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
      out.partitions.push_back(
          list_partition(broker, topic.name, partition, request.version(), body.isolation_level));
    }
    response.topics.push_back(std::move(out));
  }
  request.respond(response);
}

}  // namespace samsa

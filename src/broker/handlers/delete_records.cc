// DeleteRecords (v0-2): raises a partition's log start offset (its low
// watermark) so that records below it are no longer readable; whole
// segments below it are removed by the next retention pass. Offset -1 means
// the high watermark; an offset past the high watermark (or below -1) is
// OFFSET_OUT_OF_RANGE; lowering the log start is a no-op. Topics whose
// cleanup.policy lacks `delete` refuse with POLICY_VIOLATION and internal
// topics with INVALID_TOPIC_EXCEPTION, as Kafka does.
// With the leader as the only ISR member the new low watermark is final at
// once, so there is nothing to wait for.
#include "base/log.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/request.h"
#include "controller/topic_rules.h"
#include "protocol/error_code.h"
#include "protocol/generated/delete_records.h"

namespace samsa {
namespace {

using protocol::DeleteRecordsRequest;
using protocol::DeleteRecordsResponse;
using protocol::ErrorCode;
using PartitionResult = DeleteRecordsResponse::DeleteRecordsPartitionResult;

constexpr int64_t kHighWatermark = -1;

PartitionResult failed(int32_t index, ErrorCode code) {
  PartitionResult result;
  result.partition_index = index;
  result.low_watermark = -1;
  result.error_code = int16_t(code);
  return result;
}

PartitionResult delete_partition(Broker& broker, const std::string& topic,
                                 const DeleteRecordsRequest::DeleteRecordsPartition& requested) {
  if (is_internal_topic(topic)) return failed(requested.partition_index, ErrorCode::kInvalidTopicException);
  TopicPartition tp{topic, PartitionId(requested.partition_index)};
  Partition* partition = broker.replicas().get(tp);
  if (!partition) {
    const TopicState* t = broker.image().topic(topic);
    bool exists = t && requested.partition_index >= 0 && size_t(requested.partition_index) < t->partitions.size();
    return failed(requested.partition_index,
                  exists ? ErrorCode::kNotLeaderOrFollower : ErrorCode::kUnknownTopicOrPartition);
  }
  if (!partition->is_leader()) return failed(requested.partition_index, ErrorCode::kNotLeaderOrFollower);
  if (!partition->log().config().cleanup_policy.delete_segments) {
    return failed(requested.partition_index, ErrorCode::kPolicyViolation);
  }
  Offset high_watermark = partition->high_watermark();
  Offset target = requested.offset == kHighWatermark ? high_watermark : Offset(requested.offset);
  if (target.value() < 0 || target > high_watermark) {
    return failed(requested.partition_index, ErrorCode::kOffsetOutOfRange);
  }
  if (target > partition->log().log_start_offset()) {
    Status advanced = partition->log().advance_log_start_offset(target);
    if (!advanced.ok()) {
      LOG_WARN("delete-records", "advancing the log start of {} failed: {}", tp.to_string(),
               advanced.error().to_string());
      return failed(requested.partition_index, ErrorCode::kKafkaStorageError);
    }
    LOG_INFO("delete-records", "log start offset of {} is now {}", tp.to_string(), target.value());
  }
  PartitionResult result;
  result.partition_index = requested.partition_index;
  result.low_watermark = partition->log().log_start_offset().value();
  return result;
}

}  // namespace

void handle_delete_records(Broker& broker, Request& request) {
  DeleteRecordsRequest body;
  if (!request.decode(body)) return;

  DeleteRecordsResponse response;
  for (const auto& topic : body.topics) {
    DeleteRecordsResponse::DeleteRecordsTopicResult out;
    out.name = topic.name;
    for (const auto& p : topic.partitions) out.partitions.push_back(delete_partition(broker, topic.name, p));
    response.topics.push_back(std::move(out));
  }
  request.respond(response);
}

}  // namespace samsa

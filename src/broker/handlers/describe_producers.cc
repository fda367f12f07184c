// DescribeProducers (61, v0): the idempotent producers a partition this
// broker leads holds state for (storage/producer_state.h), as Kafka's
// ReplicaManager.activeProducerState: NOT_LEADER_OR_FOLLOWER from a
// follower, UNKNOWN_TOPIC_OR_PARTITION for a partition the image does not
// know. CoordinatorEpoch is the producer's last marker's (-1: none),
// CurrentTxnStartOffset its open transaction's first offset (-1: none).
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/request.h"
#include "protocol/error_code.h"
#include "protocol/generated/describe_producers.h"

namespace samsa {
namespace {

using protocol::DescribeProducersResponse;
using protocol::ErrorCode;
using PartitionAnswer = DescribeProducersResponse::DescribeProducersPartitionResponse;

PartitionAnswer describe_partition(Broker& broker, const std::string& topic, int32_t index) {
  PartitionAnswer out;
  out.partition_index = index;
  Partition* partition = broker.replicas().get(TopicPartition{topic, PartitionId(index)});
  if (!partition) {
    const TopicState* t = broker.image().topic(topic);
    bool exists = t && index >= 0 && size_t(index) < t->partitions.size();
    out.error_code = int16_t(exists ? ErrorCode::kNotLeaderOrFollower : ErrorCode::kUnknownTopicOrPartition);
    return out;
  }
  if (!partition->is_leader()) {
    out.error_code = int16_t(ErrorCode::kNotLeaderOrFollower);
    return out;
  }
  for (const auto& [id, entry] : partition->log().producer_state().producers()) {
    DescribeProducersResponse::DescribeProducersProducerState p;
    p.producer_id = id.value();
    p.producer_epoch = entry.epoch.value();
    p.last_sequence = entry.last_seq();
    p.last_timestamp = entry.last_timestamp;
    p.coordinator_epoch = entry.coordinator_epoch;
    p.current_txn_start_offset = entry.current_txn_first_offset ? entry.current_txn_first_offset->value() : -1;
    out.active_producers.push_back(p);
  }
  return out;
}

}  // namespace

void handle_describe_producers(Broker& broker, Request& request) {
  protocol::DescribeProducersRequest body;
  if (!request.decode(body)) return;
  DescribeProducersResponse response;
  for (const auto& topic : body.topics) {
    DescribeProducersResponse::DescribeProducersTopicResponse out;
    out.name = topic.name;
    for (int32_t index : topic.partition_indexes) {
      out.partitions.push_back(describe_partition(broker, topic.name, index));
    }
    response.topics.push_back(std::move(out));
  }
  request.respond(response);
}

}  // namespace samsa

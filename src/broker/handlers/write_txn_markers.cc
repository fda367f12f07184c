// WriteTxnMarkers (27, v0-1): a transaction coordinator's commit or abort
// markers for the partitions of a transaction (Kafka's
// KafkaApis.handleWriteTxnMarkersRequest). Each marker is appended as a
// control batch on every listed partition this broker leads
// (Partition::append_marker_as_leader: the producer's state checks it
// first), and the answer waits, as an acks=-1 produce, until the HW covers
// every appended marker. Per partition: NOT_LEADER_OR_FOLLOWER off the
// leader, UNKNOWN_TOPIC_OR_PARTITION for one the image does not know,
// INVALID_PRODUCER_EPOCH for an epoch older than the producer's,
// TRANSACTION_COORDINATOR_FENCED for an older coordinator epoch,
// NOT_ENOUGH_REPLICAS below min.insync.replicas.
//
// Epochs: v0-1 markers are accepted with an epoch >= the producer's
// (KIP-98, and KIP-1228 for the classic protocol: a marker must not be
// older than the data it ends). Transactions V2 (KIP-890 part 2) bump the
// epoch for every commit/abort and KIP-1228 then asks for a strictly
// higher one; WriteTxnMarkers v2 carries the TransactionVersion that says
// which rule applies, and is not served yet (docs/transactions.md).
#include "base/log.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/request.h"
#include "model/control_record.h"
#include "protocol/error_code.h"
#include "protocol/generated/write_txn_markers.h"

namespace samsa {
namespace {

using protocol::ErrorCode;
using protocol::WriteTxnMarkersRequest;
using protocol::WriteTxnMarkersResponse;
using PartitionResult = WriteTxnMarkersResponse::WritableTxnMarkerPartitionResult;

// A written limit on the partitions one request names (Kafka's coordinator
// sends one request per broker with the markers it has queued for it).
constexpr size_t kMaxMarkerPartitions = 10000;
// How long the answer waits for the markers' replication: Kafka's
// request.timeout.ms default, which its handler uses.
constexpr int64_t kMarkerReplicationTimeoutMs = 30000;

ErrorCode fault_error(ProducerFault fault) {
  switch (fault) {
    case ProducerFault::kInvalidProducerEpoch: return ErrorCode::kInvalidProducerEpoch;
    case ProducerFault::kCoordinatorFenced: return ErrorCode::kTransactionCoordinatorFenced;
    case ProducerFault::kOutOfOrderSequence: break;  // markers have no sequence
  }
  return ErrorCode::kUnknownServerError;
}

// Appends one marker on one partition; `wait_for` is set when it was
// appended (the offset the HW must reach).
ErrorCode write_marker(Broker& broker, const WriteTxnMarkersRequest::WritableTxnMarker& m, const std::string& topic,
                       int32_t index, std::optional<Offset>& wait_for) {
  TopicPartition tp{topic, PartitionId(index)};
  Partition* partition = broker.replicas().get(tp);
  if (!partition) {
    const TopicState* t = broker.image().topic(topic);
    bool exists = t && index >= 0 && size_t(index) < t->partitions.size();
    return exists ? ErrorCode::kNotLeaderOrFollower : ErrorCode::kUnknownTopicOrPartition;
  }
  if (!partition->is_leader() || !broker.may_lead()) return ErrorCode::kNotLeaderOrFollower;
  if (int32_t(partition->isr().size()) < partition->log().config().min_insync_replicas) {
    return ErrorCode::kNotEnoughReplicas;
  }
  TxnMarker marker{m.transaction_result ? ControlType::kCommit : ControlType::kAbort, m.coordinator_epoch};
  auto appended = partition->append_marker_as_leader(ProducerId(m.producer_id), ProducerEpoch(m.producer_epoch),
                                                     marker, /*require_higher_epoch=*/false);
  if (!appended.ok()) {
    LOG_WARN("txn-markers", "marker on {} failed: {}", tp.to_string(), appended.error().to_string());
    return ErrorCode::kKafkaStorageError;
  }
  if (appended->producer_fault) return fault_error(*appended->producer_fault);
  broker.fetch_waiters().notify(tp);
  wait_for = appended->last_offset + 1;
  return ErrorCode::kNone;
}

struct Slot {
  size_t marker, topic, partition;
};

size_t partition_count(const WriteTxnMarkersRequest& body) {
  size_t n = 0;
  for (const auto& m : body.markers) {
    for (const auto& t : m.topics) n += t.partition_indexes.size();
  }
  return n;
}

}  // namespace

void handle_write_txn_markers(Broker& broker, Request& request) {
  WriteTxnMarkersRequest body;
  if (!request.decode(body)) return;
  const bool too_many = partition_count(body) > kMaxMarkerPartitions;
  WriteTxnMarkersResponse response;
  std::vector<ProduceWait> waits;
  std::vector<Slot> slots;
  for (const auto& m : body.markers) {
    WriteTxnMarkersResponse::WritableTxnMarkerResult marker_out;
    marker_out.producer_id = m.producer_id;
    for (const auto& topic : m.topics) {
      WriteTxnMarkersResponse::WritableTxnMarkerTopicResult topic_out;
      topic_out.name = topic.name;
      for (int32_t index : topic.partition_indexes) {
        PartitionResult result;
        result.partition_index = index;
        std::optional<Offset> wait_for;
        result.error_code = int16_t(too_many ? ErrorCode::kInvalidRequest
                                             : write_marker(broker, m, topic.name, index, wait_for));
        topic_out.partitions.push_back(result);
        if (wait_for) {
          waits.push_back({TopicPartition{topic.name, PartitionId(index)}, *wait_for});
          slots.push_back({response.markers.size(), marker_out.topics.size(), topic_out.partitions.size() - 1});
        }
      }
      marker_out.topics.push_back(std::move(topic_out));
    }
    response.markers.push_back(std::move(marker_out));
  }
  if (waits.empty()) {
    request.respond(response);
    return;
  }
  request.release_frame();
  auto parked = std::make_shared<std::pair<Request, WriteTxnMarkersResponse>>(std::move(request), std::move(response));
  broker.replicas().produce_purgatory().park(
      std::move(waits), kMarkerReplicationTimeoutMs,
      [parked, slots = std::move(slots)](ProducePurgatory::Outcomes outcomes) {
        auto& [request, response] = *parked;
        for (size_t i = 0; i < slots.size(); ++i) {
          response.markers[slots[i].marker].topics[slots[i].topic].partitions[slots[i].partition].error_code =
              int16_t(produce_wait_error(outcomes[i]));
        }
        request.respond(response);
      });
}

}  // namespace samsa

// Produce: validate each partition's batches in place, assign offsets by
// patching them (Log::append), answer with the base offsets. acks=0 gets no
// response; acks=1 is answered after the leader's append; acks=-1 waits in
// the produce purgatory (broker/produce_purgatory.h) until each appended
// partition's HW covers its batch or the request's TimeoutMs passes — on a
// single replica (ISR = the leader) the HW moves with the append, so it is
// answered at once.
#include "base/log.h"
#include "broker/broker.h"
#include "broker/compacted_key_check.h"
#include "broker/handlers/handlers.h"
#include "broker/request.h"
#include "model/legacy_message_set.h"
#include "model/record_batch.h"
#include "protocol/error_code.h"
#include "protocol/generated/produce.h"

namespace samsa {
namespace {

using protocol::ErrorCode;
using protocol::ProduceRequest;
using protocol::ProduceResponse;
using PartitionResult = ProduceResponse::PartitionProduceResponse;

constexpr int16_t kFirstZstdProduceVersion = 7;
constexpr int16_t kLastVersionWithoutStorageError = 3;
// Produce v3 introduced RecordBatch v2; from it on Kafka refuses legacy
// message sets (ProduceRequest.validateRecords).
constexpr int16_t kFirstMagic2OnlyProduceVersion = 3;
constexpr int16_t kFirstTopicIdVersion = 13;  // KIP-516: topics named by id

PartitionResult failed(PartitionResult result, ErrorCode code, std::string message = {}) {
  result.error_code = int16_t(code);
  result.base_offset = -1;
  if (!message.empty()) result.error_message = std::move(message);
  return result;
}

ErrorCode storage_error(int16_t version) {
  // Produce v0-3 clients do not know KAFKA_STORAGE_ERROR.
  return version <= kLastVersionWithoutStorageError ? ErrorCode::kNotLeaderOrFollower : ErrorCode::kKafkaStorageError;
}

ErrorCode append_error(const Error& e, int16_t version) {
  switch (e.kind()) {
    case ErrorKind::kInvalidArgument: return ErrorCode::kMessageTooLarge;
    case ErrorKind::kCorrupt: return ErrorCode::kCorruptMessage;
    default: return storage_error(version);
  }
}

// What Kafka's LogValidator checks on a client's batches: every record of
// every batch (compressed or not), and record timestamps against the
// topic's message.timestamp.* settings.
ValidateOptions client_validation(const LogConfig& config, int64_t now_ms) {
  ValidateOptions options;
  options.deep = true;
  options.timestamps = TimestampPolicy{
      .log_append_time = config.message_timestamp_type == TimestampType::kLogAppendTime,
      .now_ms = now_ms,
      .before_max_ms = config.message_timestamp_before_max_ms,
      .after_max_ms = config.message_timestamp_after_max_ms,
  };
  return options;
}

// As Kafka (UnifiedLog.analyzeAndValidateRecords), a batch above the topic's
// max.message.bytes is refused before it is looked into (decompressed).
std::optional<std::string> oversized_batch(ByteView bytes, int32_t max_message_bytes) {
  BatchIterator batches(bytes);
  while (auto batch = batches.next()) {
    if (batch->bytes.size() > size_t(max_message_bytes)) {
      return "RECORD_TOO_LARGE: batch of " + std::to_string(batch->bytes.size()) + " bytes exceeds max.message.bytes";
    }
  }
  return std::nullopt;  // malformed framing is validate_records' to report
}

// Checks the batches of one partition and makes them appendable: legacy
// message sets (Produce v0-2 only) become v2 batches (`converted` owns
// them). Returns the bytes to append or an error; nothing is written on an
// error. Deep checks of compressed batches decompress at most
// `decompression_budget` bytes, which is reduced by what they used.
std::variant<std::span<uint8_t>, PartitionResult> prepare(const RecordSet& records, int16_t version,
                                                          const LogConfig& config, ValidateOptions options,
                                                          size_t& decompression_budget, Bytes& converted,
                                                          PartitionResult result) {
  ByteView bytes = records.bytes();
  if (bytes.size() < batch_layout::kLogOverhead + 5) {
    return failed(result, ErrorCode::kCorruptMessage, "empty or truncated record set");
  }
  uint8_t* data = records.mutable_data();
  int8_t first_magic = int8_t(bytes[batch_layout::kMagic]);
  if (first_magic != 2 && version >= kFirstMagic2OnlyProduceVersion) {
    return failed(result, ErrorCode::kInvalidRecord,
                  "Produce requests with version " + std::to_string(version) +
                      " are only allowed to contain record batches with magic version 2");
  }
  if (first_magic < 2) {
    auto legacy = LegacyMessageSet::parse(bytes);
    if (!legacy.ok()) return failed(result, ErrorCode::kCorruptMessage, legacy.error().message());
    auto upconverted = upconvert_to_v2(*legacy);
    if (!upconverted.ok()) return failed(result, ErrorCode::kCorruptMessage, upconverted.error().message());
    converted = std::move(upconverted).value();
    data = converted.data();
    bytes = converted;
  }
  if (auto too_large = oversized_batch(bytes, config.max_message_bytes)) {
    return failed(result, ErrorCode::kMessageTooLarge, *too_large);
  }
  options.max_decompressed_bytes = decompression_budget;
  RecordsValidation validation = validate_records(bytes, options);
  decompression_budget -= std::min(decompression_budget, validation.decompressed_bytes);
  if (!validation.ok()) {
    return failed(result, ErrorCode(validation.kafka_error_code()),
                  std::string(to_string(validation.fault)) + ": " + validation.detail);
  }
  // max.message.bytes and LogAppendTime stamping are the Log's (append).
  for (const BatchInfo& batch : validation.summary.batches) {
    if (batch.compression == Compression::kZstd && version < kFirstZstdProduceVersion) {
      return failed(result, ErrorCode::kUnsupportedCompressionType);
    }
  }
  return std::span<uint8_t>(data, bytes.size());
}

// Partition.appendRecordsToLeader (Kafka 3.9): with acks=-1 nothing is
// written while the ISR is smaller than the topic's min.insync.replicas.
std::string not_enough_replicas(const Partition& partition, int32_t min_isr) {
  std::string isr;
  for (NodeId id : partition.isr()) isr += (isr.empty() ? "" : ", ") + std::to_string(id.value());
  return "The size of the current ISR Set(" + isr + ") is insufficient to satisfy the min.isr requirement of " +
         std::to_string(min_isr) + " for partition " + partition.topic_partition().to_string();
}

// `wait_for` is set when the produce must wait for the HW (acks=-1 and
// appended): the offset the HW must reach.
PartitionResult produce_partition(Broker& broker, const std::string& topic,
                                  const ProduceRequest::PartitionProduceData& data, int16_t acks, int16_t version,
                                  size_t& decompression_budget, std::optional<Offset>& wait_for) {
  PartitionResult result;
  result.index = data.index;
  TopicPartition tp{topic, PartitionId(data.index)};
  Partition* partition = broker.replicas().get(tp);
  if (!partition) {
    const TopicState* t = broker.image().topic(topic);
    bool exists = t && data.index >= 0 && size_t(data.index) < t->partitions.size();
    return failed(result, exists ? ErrorCode::kNotLeaderOrFollower : ErrorCode::kUnknownTopicOrPartition);
  }
  // Self-fencing: a broker that has not heard from the controller within
  // broker.session.timeout.ms has been fenced there and another leader
  // elected; appending here would fork the partition's history.
  if (!partition->is_leader() || !broker.may_lead()) return failed(result, ErrorCode::kNotLeaderOrFollower);
  const LogConfig& config = partition->log().config();
  if (acks == -1 && int32_t(partition->isr().size()) < config.min_insync_replicas) {
    return failed(result, ErrorCode::kNotEnoughReplicas, not_enough_replicas(*partition, config.min_insync_replicas));
  }
  Bytes converted;
  ValidateOptions options = client_validation(config, broker.clock().wall_ms());
  auto prepared = prepare(data.records, version, config, options, decompression_budget, converted, result);
  if (auto* error = std::get_if<PartitionResult>(&prepared)) return *error;
  std::span<uint8_t> batches = std::get<std::span<uint8_t>>(prepared);
  if (config.cleanup_policy.compact) {
    KeylessRecords keyless = find_keyless_records(ByteView(batches.data(), batches.size()), tp.to_string());
    if (keyless.found()) {
      for (int32_t index : keyless.record_indexes) result.record_errors.push_back({index, keyless.record_message});
      return failed(result, ErrorCode::kInvalidRecord, keyless.message);
    }
  }

  auto appended = partition->append_as_leader(batches.data(), batches.size());
  if (!appended.ok()) {
    LOG_WARN("produce", "append to {} failed: {}", tp.to_string(), appended.error().to_string());
    return failed(result, append_error(appended.error(), version), appended.error().message());
  }
  if (appended->producer_fault) {
    bool epoch = *appended->producer_fault == ProducerFault::kInvalidProducerEpoch;
    return failed(result, epoch ? ErrorCode::kInvalidProducerEpoch : ErrorCode::kOutOfOrderSequenceNumber);
  }
  if (appended->duplicate) {
    LOG_DEBUG("produce", "{}: a duplicate of the batch at {}, answered with its offset", tp.to_string(),
              appended->first_offset.value());
  }
  result.base_offset = appended->first_offset.value();
  result.log_append_time_ms = appended->log_append_time_ms.value_or(-1);
  result.log_start_offset = appended->log_start_offset.value();
  broker.fetch_waiters().notify(tp);
  if (acks == -1) wait_for = appended->last_offset + 1;
  return result;
}

// Where a parked partition's answer goes in the response.
struct WaitSlot {
  size_t topic;
  size_t partition;
};

// acks=-1 with at least one partition appended (Kafka's
// delayedProduceRequestRequired): the answer waits for the purgatory.
void respond_when_replicated(Broker& broker, Request& request, ProduceResponse response,
                             std::vector<ProduceWait> waits, std::vector<WaitSlot> slots, int32_t timeout_ms) {
  request.release_frame();  // the records are in the log: the wait holds no request bytes
  auto parked = std::make_shared<std::pair<Request, ProduceResponse>>(std::move(request), std::move(response));
  broker.replicas().produce_purgatory().park(
      std::move(waits), timeout_ms, [parked, slots = std::move(slots)](ProducePurgatory::Outcomes outcomes) {
        auto& [request, response] = *parked;
        for (size_t i = 0; i < slots.size(); ++i) {
          response.responses[slots[i].topic].partition_responses[slots[i].partition].error_code =
              int16_t(produce_wait_error(outcomes[i]));
        }
        request.respond(response);
      });
}

// Produce v13+ names topics by id (KIP-516), resolved through the metadata
// image; nullopt for an id the image does not know (UNKNOWN_TOPIC_ID).
std::optional<std::string> topic_name(Broker& broker, const ProduceRequest::TopicProduceData& topic,
                                      int16_t version) {
  if (version < kFirstTopicIdVersion) return topic.name;
  const TopicState* state = broker.image().topic_by_id(topic.topic_id);
  if (!state) return std::nullopt;
  return state->name;
}

}  // namespace

void handle_produce(Broker& broker, Request& request) {
  ProduceRequest body;
  if (!request.decode(body)) return;
  int16_t version = request.version();
  bool valid_acks = body.acks == 0 || body.acks == 1 || body.acks == -1;

  // produce.request.decompressed.max.bytes: one request's deep checks
  // together decompress at most this much, so that one request cannot hold
  // the event loop for longer than that costs (docs/operations.md).
  size_t decompression_budget = size_t(broker.config().produce_request_decompressed_max_bytes);
  ProduceResponse response;
  std::vector<ProduceWait> waits;
  std::vector<WaitSlot> slots;
  for (const auto& topic : body.topic_data) {
    ProduceResponse::TopicProduceResponse out;
    out.name = topic.name;
    out.topic_id = topic.topic_id;
    std::optional<std::string> name = topic_name(broker, topic, version);
    for (const auto& data : topic.partition_data) {
      PartitionResult result;
      result.index = data.index;
      if (!valid_acks) {
        out.partition_responses.push_back(failed(result, ErrorCode::kInvalidRequiredAcks));
      } else if (!name) {
        out.partition_responses.push_back(failed(result, ErrorCode::kUnknownTopicId));
      } else {
        std::optional<Offset> wait_for;
        out.partition_responses.push_back(
            produce_partition(broker, *name, data, body.acks, version, decompression_budget, wait_for));
        if (wait_for) {
          waits.push_back({TopicPartition{*name, PartitionId(data.index)}, *wait_for});
          slots.push_back({response.responses.size(), out.partition_responses.size() - 1});
        }
      }
    }
    response.responses.push_back(std::move(out));
  }
  if (body.acks == 0) {
    request.no_reply();
    return;
  }
  if (!waits.empty()) {
    respond_when_replicated(broker, request, std::move(response), std::move(waits), std::move(slots),
                            body.timeout_ms);
    return;
  }
  request.respond(response);
}

}  // namespace samsa

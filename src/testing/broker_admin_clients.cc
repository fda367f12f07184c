#include "testing/broker_admin_clients.h"

#include <array>
#include <utility>

#include "protocol/error_code.h"
#include "protocol/generated/create_topics.h"
#include "protocol/generated/delete_topics.h"
#include "protocol/generated/list_offsets.h"
#include "testing/topic_history.h"

namespace samsa::sim {
namespace {

using protocol::ErrorCode;

constexpr int16_t kListOffsetsVersion = 7;
constexpr int16_t kCreateTopicsVersion = 5;
constexpr int16_t kDeleteTopicsVersion = 5;
constexpr int64_t kLatest = -1;
constexpr int64_t kEarliest = -2;
constexpr int32_t kAdminTimeoutMs = 5000;

protocol::ListOffsetsRequest list_offsets_request(const std::string& topic, int32_t partitions, int64_t timestamp) {
  protocol::ListOffsetsRequest req;
  req.replica_id = -1;
  protocol::ListOffsetsRequest::ListOffsetsTopic t;
  t.name = topic;
  for (int32_t p = 0; p < partitions; ++p) {
    protocol::ListOffsetsRequest::ListOffsetsPartition part;
    part.partition_index = p;
    part.timestamp = timestamp;
    t.partitions.push_back(part);
  }
  req.topics.push_back(std::move(t));
  return req;
}

// The answer for `partition`, or nullptr.
const protocol::ListOffsetsResponse::ListOffsetsPartitionResponse* listed(const protocol::ListOffsetsResponse& resp,
                                                                          int32_t partition) {
  for (const auto& t : resp.topics) {
    for (const auto& p : t.partitions) {
      if (p.partition_index == partition) return &p;
    }
  }
  return nullptr;
}

int16_t acks_drawn(Rng& rng) { return std::array<int16_t, 3>{0, 1, -1}[rng.uniform(3)]; }

}  // namespace

// ---- SimOffsetLister ----

SimOffsetLister::SimOffsetLister(ClientEnv env, std::string topic, int32_t partitions, uint64_t seed)
    : PeriodicClient(std::move(env), "sim-offset-lister"), topic_(std::move(topic)), partitions_(partitions),
      rng_(seed) {}

void SimOffsetLister::send_one() {
  int64_t timestamp = rng_.chance(0.5) ? kLatest : kEarliest;
  std::vector<int64_t> floors;
  for (int32_t p = 0; p < partitions_; ++p) floors.push_back(env_.history->watermark_floor(partition_key(topic_, p)));
  sent();
  client_->call<protocol::ListOffsetsRequest, protocol::ListOffsetsResponse>(
      list_offsets_request(topic_, partitions_, timestamp), kListOffsetsVersion,
      [this, timestamp, floors](Result<protocol::ListOffsetsResponse> resp) {
        finished();
        if (!resp.ok()) return;
        for (int32_t p = 0; p < partitions_; ++p) {
          const auto* answer = listed(resp.value(), p);
          if (!answer || answer->error_code != 0) continue;
          ++answers_;
          std::string key = partition_key(topic_, p);
          if (timestamp == kEarliest) env_.history->listed_earliest(key, answer->offset);
          else env_.history->listed_latest(key, floors[size_t(p)], answer->offset);
        }
      });
}

// ---- SimTopicChurn ----

SimTopicChurn::SimTopicChurn(ClientEnv env, std::string topic, uint64_t seed)
    : PeriodicClient(std::move(env), "sim-topic-churn"), topic_(std::move(topic)), rng_(seed) {}

std::optional<SimTopicChurn::Live> SimTopicChurn::live() const {
  switch (phase_) {
    case Phase::kCreate:
    case Phase::kProbeDeleted: return std::nullopt;  // nothing produced to what may exist
    case Phase::kDelete: return Live{key(), true};
    default: return Live{key(), false};
  }
}

void SimTopicChurn::send_one() {
  sent();
  switch (phase_) {
    case Phase::kCreate: return create();
    case Phase::kListFresh: return list_fresh();
    case Phase::kProduce: return produce();
    case Phase::kReadBack: return read_back();
    case Phase::kDelete: return remove();
    case Phase::kProbeDeleted: return probe_deleted();
  }
}

bool SimTopicChurn::answered(int16_t error_code, const std::string& what) {
  env_.topics->answered(topic_, error_code == int16_t(ErrorCode::kUnknownTopicOrPartition),
                        env_.runtime->now_ms(), what);
  return error_code == 0;
}

void SimTopicChurn::create() {
  protocol::CreateTopicsRequest req;
  protocol::CreateTopicsRequest::CreatableTopic t;
  t.name = topic_;
  t.num_partitions = 1;
  t.replication_factor = 1;
  req.topics.push_back(t);
  req.timeout_ms = kAdminTimeoutMs;
  env_.topics->changing(topic_);
  client_->call<protocol::CreateTopicsRequest, protocol::CreateTopicsResponse>(
      req, kCreateTopicsVersion, [this](Result<protocol::CreateTopicsResponse> resp) {
        finished();
        if (!resp.ok() || resp.value().topics.size() != 1) return;  // unknown: ask again
        int16_t code = resp.value().topics[0].error_code;
        if (code == int16_t(ErrorCode::kTopicAlreadyExists)) {
          // A create (or a failed delete) whose answer was lost: start over
          // from a deleted topic, so that the next incarnation is known empty.
          phase_ = Phase::kDelete;
          return;
        }
        if (code != 0) return;
        env_.topics->created(topic_);
        ++incarnation_;
        if (env_.trace) env_.trace("churn: created " + key());
        phase_ = Phase::kListFresh;
      });
}

void SimTopicChurn::list_fresh() {
  client_->call<protocol::ListOffsetsRequest, protocol::ListOffsetsResponse>(
      list_offsets_request(topic_, 1, kLatest), kListOffsetsVersion,
      [this](Result<protocol::ListOffsetsResponse> resp) {
        finished();
        if (!resp.ok()) return;
        const auto* answer = listed(resp.value(), 0);
        if (!answer || !answered(answer->error_code, "ListOffsets")) return;
        env_.topics->listed_fresh(key(), 0, answer->offset);
        produces_left_ = int(rng_.range(1, 8));
        read_position_ = 0;
        phase_ = Phase::kProduce;
      });
}

void SimTopicChurn::produce() {
  int16_t acks = acks_drawn(rng_);
  std::vector<std::string> values;
  size_t count = size_t(rng_.range(1, 5));
  for (size_t i = 0; i < count; ++i) {
    values.push_back("c" + std::to_string(incarnation_) + "-" + std::to_string(next_seq_++));
  }
  std::string k = key();
  env_.history->sent(k, values);
  client_->call<protocol::ProduceRequest, protocol::ProduceResponse>(
      produce_request(topic_, 0, acks, values, env_.runtime->clock().wall_ms()), kProduceVersion,
      [this, k, acks, values](Result<protocol::ProduceResponse> resp) {
        finished();
        if (!resp.ok()) return;
        if (--produces_left_ <= 0) phase_ = Phase::kReadBack;
        if (acks == 0) return;
        const auto& topics = resp.value().responses;
        if (topics.size() != 1 || topics[0].partition_responses.size() != 1) return;
        const auto& pr = topics[0].partition_responses[0];
        if (answered(pr.error_code, "Produce")) env_.history->acknowledged(k, pr.base_offset, values);
      },
      acks != 0);
}

void SimTopicChurn::read_back() {
  std::string k = key();
  int64_t offset = read_position_;
  int64_t floor = env_.history->watermark_floor(k);
  client_->call<protocol::FetchRequest, protocol::FetchResponse>(
      fetch_request(topic_, 0, offset), kFetchVersion,
      [this, k, offset, floor](Result<protocol::FetchResponse> resp) {
        finished();
        if (!resp.ok() || resp.value().responses.size() != 1 || resp.value().responses[0].partitions.size() != 1) {
          return;
        }
        const auto& p = resp.value().responses[0].partitions[0];
        if (p.error_code == int16_t(ErrorCode::kOffsetOutOfRange)) {  // shorter after a power loss
          read_position_ = 0;
          return;
        }
        if (!answered(p.error_code, "Fetch")) return;
        auto records = decode_fetched(p.records.bytes());
        if (!records.ok()) return env_.history->corrupt(k, records.error().message());
        env_.history->fetched(k, offset, p.high_watermark, records.value(), floor);
        for (const auto& r : records.value()) read_position_ = std::max(read_position_, r.offset + 1);
        if (read_position_ >= p.high_watermark) phase_ = Phase::kDelete;
      });
}

void SimTopicChurn::remove() {
  protocol::DeleteTopicsRequest req;
  req.topic_names.push_back(topic_);
  req.timeout_ms = kAdminTimeoutMs;
  env_.topics->changing(topic_);
  client_->call<protocol::DeleteTopicsRequest, protocol::DeleteTopicsResponse>(
      req, kDeleteTopicsVersion, [this](Result<protocol::DeleteTopicsResponse> resp) {
        finished();
        if (!resp.ok() || resp.value().responses.size() != 1) return;
        int16_t code = resp.value().responses[0].error_code;
        // UNKNOWN_TOPIC_OR_PARTITION: an earlier delete whose answer was lost.
        if (code != 0 && code != int16_t(ErrorCode::kUnknownTopicOrPartition)) return;
        env_.topics->deleted(topic_);
        if (env_.trace) env_.trace("churn: deleted " + key());
        phase_ = Phase::kProbeDeleted;
      });
}

// A fetch or a ListOffsets on the deleted name; then the next incarnation.
void SimTopicChurn::probe_deleted() {
  probe_with_fetch_ = !probe_with_fetch_;
  if (probe_with_fetch_) {
    client_->call<protocol::FetchRequest, protocol::FetchResponse>(
        fetch_request(topic_, 0, 0), kFetchVersion, [this](Result<protocol::FetchResponse> resp) {
          finished();
          if (!resp.ok() || resp.value().responses.size() != 1 || resp.value().responses[0].partitions.size() != 1) {
            return;
          }
          answered(resp.value().responses[0].partitions[0].error_code, "Fetch");
        });
    return;
  }
  client_->call<protocol::ListOffsetsRequest, protocol::ListOffsetsResponse>(
      list_offsets_request(topic_, 1, kLatest), kListOffsetsVersion,
      [this](Result<protocol::ListOffsetsResponse> resp) {
        finished();
        if (!resp.ok()) return;
        const auto* answer = listed(resp.value(), 0);
        if (!answer) return;
        answered(answer->error_code, "ListOffsets");
        phase_ = Phase::kCreate;
      });
}

}  // namespace samsa::sim

#include "testing/broker_clients.h"

#include <utility>

#include "model/record.h"
#include "model/record_batch.h"
#include "model/record_batch_builder.h"
#include "protocol/error_code.h"
#include "protocol/generated/fetch.h"
#include "protocol/generated/produce.h"

namespace samsa::sim {
namespace {

constexpr int64_t kConnectTimeoutMs = 3000;
constexpr int32_t kRequestTimeoutMs = 5000;
constexpr int32_t kFetchMaxBytes = 256 * 1024;

std::string text(ByteView v) { return std::string(reinterpret_cast<const char*>(v.data()), v.size()); }

// Dials `client` if needed; `then` runs once connected (or never, if the
// dial fails: `failed` runs instead).
void ensure_connected(ClientEnv& env, std::unique_ptr<KafkaClient>& client, const std::string& client_id,
                      bool& connecting, std::function<void()> then, std::function<void()> failed) {
  if (client && client->connected()) return then();
  if (connecting) return;
  client = std::make_unique<KafkaClient>(*env.runtime, client_id);
  connecting = true;
  BrokerAddress to = env.locate ? env.locate() : env.broker;
  client->connect(to.host, to.port, kConnectTimeoutMs,
                  [&connecting, then = std::move(then), failed = std::move(failed)](Status s) {
                    connecting = false;
                    if (s.ok()) then(); else failed();
                  });
}

}  // namespace

protocol::FetchRequest fetch_request(const std::string& topic, int32_t partition, int64_t offset) {
  protocol::FetchRequest req;
  req.max_wait_ms = 0;
  req.min_bytes = 0;
  req.max_bytes = kFetchMaxBytes;
  protocol::FetchRequest::FetchTopic t;
  t.topic = topic;
  protocol::FetchRequest::FetchPartition p;
  p.partition = partition;
  p.fetch_offset = offset;
  p.partition_max_bytes = kFetchMaxBytes;
  t.partitions.push_back(p);
  req.topics.push_back(std::move(t));
  return req;
}

protocol::ProduceRequest produce_request(const std::string& topic, int32_t partition, int16_t acks,
                                         const std::vector<std::string>& values, int64_t now_ms) {
  RecordBatchBuilder builder;
  for (const auto& value : values) {
    builder.add(now_ms, std::nullopt, ByteView(reinterpret_cast<const uint8_t*>(value.data()), value.size()));
  }
  auto batch = builder.build();
  ASSERT_MSG(batch.ok(), "building a simulated batch");
  protocol::ProduceRequest req;
  req.acks = acks;
  req.timeout_ms = kRequestTimeoutMs;
  protocol::ProduceRequest::TopicProduceData t;
  t.name = topic;
  protocol::ProduceRequest::PartitionProduceData p;
  p.index = partition;
  p.records = RecordSet::owned(std::move(batch).value());
  t.partition_data.push_back(std::move(p));
  req.topic_data.push_back(std::move(t));
  return req;
}

namespace {

// The one partition a fetch_request() asked for, or nullptr.
const protocol::FetchResponse::PartitionData* only_partition(const protocol::FetchResponse& resp) {
  if (resp.responses.size() != 1 || resp.responses[0].partitions.size() != 1) return nullptr;
  return &resp.responses[0].partitions[0];
}

}  // namespace

std::string partition_key(const std::string& topic, int32_t partition) {
  return topic + "-" + std::to_string(partition);
}

Result<std::vector<ReadRecord>> decode_fetched(ByteView records) {
  std::vector<ReadRecord> out;
  BatchIterator batches(records);
  while (auto batch = batches.next()) {
    std::string detail;
    BatchFault fault = validate_batch(batch->bytes, ValidateOptions{}, &detail);
    if (fault != BatchFault::kNone) {
      return Error(ErrorKind::kCorrupt, "batch at offset " + std::to_string(batch->header.base_offset().value()) +
                                            ": " + detail);
    }
    ASSIGN_OR_RETURN(RecordIterator it, RecordIterator::open(batch->bytes));
    Record r;
    while (it.next(r)) {
      out.push_back(ReadRecord{r.offset(it.header()).value(), r.value ? text(*r.value) : std::string()});
    }
    RETURN_IF_ERROR(it.status());
  }
  if (batches.malformed()) return Error(ErrorKind::kCorrupt, "bytes that are not a batch after a valid one");
  return out;
}

// ---- PeriodicClient ----

void PeriodicClient::start(int64_t interval_ms, int64_t first_delay_ms) {
  interval_ms_ = interval_ms;
  running_ = true;
  schedule(first_delay_ms);
}

void PeriodicClient::stop() {
  running_ = false;
  if (timer_) env_.runtime->cancel_timer(timer_);
  timer_ = 0;
  client_.reset();
  in_flight_ = connecting_ = false;
}

void PeriodicClient::schedule(int64_t delay_ms) {
  if (!running_) return;
  timer_ = env_.runtime->add_timer(delay_ms, [this] {
    timer_ = 0;
    tick();
  });
}

void PeriodicClient::finished() {
  in_flight_ = false;
  schedule(interval_ms_);
}

void PeriodicClient::tick() {
  if (in_flight_ || connecting_) return schedule(interval_ms_);
  ensure_connected(
      env_, client_, client_id_, connecting_, [this] { send_one(); }, [this] { schedule(kReconnectBackoffMs); });
}

// ---- SimProducer ----

SimProducer::SimProducer(ClientEnv env, int id, std::string topic, int32_t partitions, uint64_t seed)
    : PeriodicClient(std::move(env), "sim-producer-" + std::to_string(id)), id_(id), topic_(std::move(topic)),
      partitions_(partitions), rng_(seed) {}

void SimProducer::send_one() {
  int32_t partition = int32_t(rng_.uniform(uint64_t(partitions_)));
  int16_t acks = std::array<int16_t, 3>{0, 1, -1}[rng_.uniform(3)];
  if (pinned_partition_) partition = *pinned_partition_;
  if (fixed_acks_) acks = *fixed_acks_;
  size_t count = size_t(rng_.range(1, 5));
  std::vector<std::string> values;
  for (size_t i = 0; i < count; ++i) values.push_back("p" + std::to_string(id_) + "-" + std::to_string(next_seq_++));
  protocol::ProduceRequest req = produce_request(topic_, partition, acks, values, env_.runtime->clock().wall_ms());

  std::string key = partition_key(topic_, partition);
  env_.history->sent(key, values);
  sent();
  client_->call<protocol::ProduceRequest, protocol::ProduceResponse>(
      req, kProduceVersion,
      [this, key, acks, values = std::move(values)](Result<protocol::ProduceResponse> resp) {
        finished();
        if (!resp.ok() || acks == 0) return;
        const auto& topics = resp.value().responses;
        if (topics.size() != 1 || topics[0].partition_responses.size() != 1) return;
        const auto& pr = topics[0].partition_responses[0];
        if (pr.error_code != 0) {
          if (env_.trace) env_.trace("produce " + key + " error " + std::to_string(pr.error_code));
          drop_connection_if_routed();
          return;
        }
        env_.history->acknowledged(key, pr.base_offset, values);
        acknowledged_ += values.size();
      },
      acks != 0);
}

// ---- SimConsumer ----

SimConsumer::SimConsumer(ClientEnv env, int id, std::string topic, int32_t partition)
    : PeriodicClient(std::move(env), "sim-consumer-" + std::to_string(id)), topic_(std::move(topic)),
      partition_(partition) {}

void SimConsumer::send_one() {
  sent();
  int64_t offset = position_;
  int64_t floor = env_.history->watermark_floor(partition_key(topic_, partition_));
  client_->call<protocol::FetchRequest, protocol::FetchResponse>(
      fetch_request(topic_, partition_, offset), kFetchVersion,
      [this, offset, floor](Result<protocol::FetchResponse> resp) {
        finished();
        if (!resp.ok()) return;
        const auto* p = only_partition(resp.value());
        if (!p) return;
        std::string key = partition_key(topic_, partition_);
        if (p->error_code == int16_t(protocol::ErrorCode::kOffsetOutOfRange)) {
          position_ = 0;
          return;
        }
        if (p->error_code != 0) return drop_connection_if_routed();
        auto records = decode_fetched(p->records.bytes());
        if (!records.ok()) return env_.history->corrupt(key, records.error().message());
        env_.history->fetched(key, offset, p->high_watermark, records.value(), floor);
        for (const auto& r : records.value()) position_ = std::max(position_, r.offset + 1);
      });
}

// ---- read_whole_log ----

namespace {

// One read of a whole partition: fetches until the high watermark.
struct WholeLogRead : std::enable_shared_from_this<WholeLogRead> {
  ClientEnv env;
  std::string topic;
  int32_t partition;
  int64_t deadline_ms;
  std::function<void(Result<std::vector<ReadRecord>>)> done;
  std::unique_ptr<KafkaClient> client;
  bool connecting = false;
  std::vector<ReadRecord> log;

  int64_t next_offset() const { return log.empty() ? 0 : log.back().offset + 1; }

  void retry_or_fail(const std::string& why) {
    if (env.runtime->now_ms() >= deadline_ms) {
      return done(Error(ErrorKind::kTimedOut, "reading " + partition_key(topic, partition) + ": " + why));
    }
    client.reset();
    auto self = shared_from_this();
    env.runtime->add_timer(kReconnectBackoffMs, [self] { self->step(); });
  }

  void step() {
    auto self = shared_from_this();
    ensure_connected(
        env, client, "sim-reader", connecting, [self] { self->fetch(); },
        [self] { self->retry_or_fail("cannot connect"); });
  }

  void fetch() {
    auto self = shared_from_this();
    int64_t offset = next_offset();
    client->call<protocol::FetchRequest, protocol::FetchResponse>(
        fetch_request(topic, partition, offset), kFetchVersion, [self, offset](Result<protocol::FetchResponse> resp) {
          if (!resp.ok()) return self->retry_or_fail(resp.error().message());
          const auto* p = only_partition(resp.value());
          if (!p) return self->retry_or_fail("unexpected fetch response");
          if (p->error_code == int16_t(protocol::ErrorCode::kUnknownTopicOrPartition)) {
            return self->done(Error(ErrorKind::kNotFound, partition_key(self->topic, self->partition) + " is gone"));
          }
          if (p->error_code != 0) return self->retry_or_fail("error " + std::to_string(p->error_code));
          auto records = decode_fetched(p->records.bytes());
          if (!records.ok()) return self->done(records.error());
          for (auto& r : records.value()) {
            if (r.offset >= offset) self->log.push_back(std::move(r));
          }
          if (self->next_offset() >= p->high_watermark || records.value().empty()) {
            return self->done(std::move(self->log));
          }
          self->fetch();
        });
  }
};

}  // namespace

void read_whole_log(ClientEnv env, const std::string& topic, int32_t partition, int64_t deadline_ms,
                    std::function<void(Result<std::vector<ReadRecord>>)> done) {
  auto read = std::make_shared<WholeLogRead>();
  read->env = std::move(env);
  read->topic = topic;
  read->partition = partition;
  read->deadline_ms = deadline_ms;
  read->done = std::move(done);
  read->step();
}

}  // namespace samsa::sim

#pragma once
// The broker simulation's clients: producers and consumers that speak the
// real Kafka protocol (KafkaClient, protocol/'s codec) to a real Broker
// on the simulated runtime, and report what they see to one LogHistory,
// which judges it (log_history.h).
//
// - SimProducer: batches of 1-5 records, each value unique ("p<id>-<seq>"),
//   acks drawn per request from {0, 1, -1}; an acknowledged batch is
//   reported with its base offset; an error or a lost connection leaves the
//   outcome unknown (the values stay "sent": they may or may not be in the
//   log, which LogHistory allows). One request in flight, so acknowledgements
//   of one producer arrive in offset order.
// - SimConsumer: fetches one partition from its position, checks every batch
//   (CRC, framing: a torn or corrupt batch served is a violation of its
//   own), and reports the records and the high watermark. OFFSET_OUT_OF_RANGE
//   (the log got shorter after a power loss) restarts it from offset 0.
// - read_whole_log(): the read after a restart that LogHistory::recovered()
//   needs, fetching from 0 until the high watermark.
//
// All run on the runtime's loop, driven by its timers; a client whose
// connection fails dials again after a backoff. Nothing here blocks.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/rng.h"
#include "io/runtime.h"
#include "io/kafka_client.h"
#include "protocol/generated/fetch.h"
#include "protocol/generated/produce.h"
#include "testing/log_history.h"

namespace samsa::sim {

struct BrokerAddress {
  std::string host;
  uint16_t port = 0;
};

class TopicHistory;
class GroupHistory;

// What every simulated client shares.
struct ClientEnv {
  Runtime* runtime = nullptr;
  LogHistory* history = nullptr;
  TopicHistory* topics = nullptr;  // for clients that create and delete topics
  GroupHistory* groups = nullptr;  // for consumer group members
  BrokerAddress broker;
  // In a cluster: where to dial (the leader of the client's partition as
  // its metadata would say), asked at each dial instead of `broker`; a
  // client then drops its connection on an error answer, so the next
  // request finds the leader again.
  std::function<BrokerAddress()> locate;
  std::function<void(const std::string&)> trace;  // one line per notable event
};

// "topic-partition", the key LogHistory uses.
std::string partition_key(const std::string& topic, int32_t partition);

// A produce request of one batch with these values to topic-partition.
protocol::ProduceRequest produce_request(const std::string& topic, int32_t partition, int16_t acks,
                                         const std::vector<std::string>& values, int64_t now_ms);
// A fetch request for one partition from `offset` (max_wait 0).
protocol::FetchRequest fetch_request(const std::string& topic, int32_t partition, int64_t offset);
inline constexpr int16_t kProduceVersion = 8;  // topic names, no tagged fields
inline constexpr int16_t kFetchVersion = 11;
inline constexpr int64_t kReconnectBackoffMs = 100;

// Records of a fetch response's RECORDS bytes, checked batch by batch.
// A batch that fails its CRC or framing yields an error naming it; a
// partial batch at the end (a fetch cut at max bytes) is not an error.
Result<std::vector<ReadRecord>> decode_fetched(ByteView records);

// What SimProducer and SimConsumer share: one connection, at most one
// request in flight, the next one `interval_ms` after the last answer, and a
// redial after a failed connect.
class PeriodicClient {
 public:
  virtual ~PeriodicClient() = default;
  void start(int64_t interval_ms, int64_t first_delay_ms);
  void stop();

 protected:
  PeriodicClient(ClientEnv env, std::string client_id) : env_(std::move(env)), client_id_(std::move(client_id)) {}
  // Sends one request on client_ (connected, nothing in flight); its answer
  // must end with finished().
  virtual void send_one() = 0;
  void sent() { in_flight_ = true; }
  void finished();

  ClientEnv env_;
  std::unique_ptr<KafkaClient> client_;

 private:
  void tick();
  void schedule(int64_t delay_ms);

  std::string client_id_;
  int64_t interval_ms_ = 10;
  TimerId timer_ = 0;
  bool running_ = false;
  bool in_flight_ = false;
  bool connecting_ = false;
};

class SimProducer final : public PeriodicClient {
 public:
  SimProducer(ClientEnv env, int id, std::string topic, int32_t partitions, uint64_t seed);
  // Starts producing every `interval_ms`, from a random first instant.
  void start(int64_t interval_ms) { PeriodicClient::start(interval_ms, rng_.range(0, interval_ms)); }
  size_t acknowledged() const { return acknowledged_; }
  // Every request with these acks (default: drawn per request from 0, 1, -1).
  void set_acks(int16_t acks) { fixed_acks_ = acks; }
  // Every request to this partition (default: drawn per request).
  void pin_partition(int32_t partition) { pinned_partition_ = partition; }

 private:
  void send_one() override;
  void drop_connection_if_routed() {
    if (env_.locate) client_.reset();
  }

  int id_;
  std::optional<int16_t> fixed_acks_;
  std::optional<int32_t> pinned_partition_;
  std::string topic_;
  int32_t partitions_;
  Rng rng_;
  uint64_t next_seq_ = 0;
  size_t acknowledged_ = 0;
};

class SimConsumer final : public PeriodicClient {
 public:
  SimConsumer(ClientEnv env, int id, std::string topic, int32_t partition);
  void start(int64_t interval_ms) { PeriodicClient::start(interval_ms, 0); }
  int64_t position() const { return position_; }

 private:
  void send_one() override;
  void drop_connection_if_routed() {
    if (env_.locate) client_.reset();
  }

  std::string topic_;
  int32_t partition_;
  int64_t position_ = 0;
};

// Reads topic-partition from offset 0 up to the high watermark, then calls
// `done` with the whole log (or the error that stopped it). Retries a
// failed connection until `deadline_ms` (runtime time). A topic that does
// not exist (UNKNOWN_TOPIC_OR_PARTITION) ends it with kNotFound.
void read_whole_log(ClientEnv env, const std::string& topic, int32_t partition, int64_t deadline_ms,
                    std::function<void(Result<std::vector<ReadRecord>>)> done);

}  // namespace samsa::sim

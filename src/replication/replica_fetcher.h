#pragma once
// Replica fetchers: how a follower copies its leaders' logs (Kafka's
// ReplicaFetcherThread / AbstractFetcherThread / ReplicaFetcherManager).
//
// A ReplicaFetcher is one connection to one source broker (the leader of
// the partitions it holds) and one Fetch request in flight at a time, for
// all of its partitions at once (Fetch v18 with ReplicaState{ReplicaId,
// ReplicaEpoch = our broker epoch}, KIP-903). Per partition it sends the
// follower's position (fetch offset = log end, CurrentLeaderEpoch,
// LastFetchedEpoch, its HW for KIP-1166) and, per answer:
//   - DivergingEpoch: truncate (Partition::on_diverging_epoch) and ignore
//     the watermark of that answer (KAFKA-14704); fetch again at once;
//   - records: append them as they are (Partition::append_as_follower), then
//     take the leader's HW (clamped to our log end);
//   - OFFSET_OUT_OF_RANGE: truncate per the leader's log start and HW
//     (Partition::on_fetch_out_of_range);
//   - any other error: that partition waits replica.fetch.backoff.ms.
// A transport failure (connect, reset, no answer within
// replica.socket.timeout.ms beyond the wait) drops the connection and the
// whole fetcher waits replica.fetch.backoff.ms before dialing again.
// An answer for a partition whose leader or epoch changed since the request
// was sent is dropped (its position is no longer what was asked).
//
// ReplicaFetcherManager: num.replica.fetchers fetchers per source broker;
// a partition goes to fetcher hash(topic, partition) % num.replica.fetchers
// of its leader (AbstractFetcherManager.getFetcherId), and a fetcher that
// has no partitions left is closed.
//
// Control input: add/remove calls from the ReplicaManager (become_follower /
// become_leader). Loop-thread only; everything runs on the Runtime given.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "io/kafka_client.h"
#include "io/runtime.h"
#include "model/ids.h"
#include "protocol/generated/fetch.h"
#include "replication/partition.h"

namespace samsa {

struct ReplicaFetcherConfig {
  int32_t num_fetchers = 1;                    // num.replica.fetchers
  int32_t fetch_max_bytes = 1048576;           // replica.fetch.max.bytes (per partition)
  int32_t fetch_wait_max_ms = 500;             // replica.fetch.wait.max.ms
  int32_t fetch_min_bytes = 1;                 // replica.fetch.min.bytes
  int32_t fetch_response_max_bytes = 10485760; // replica.fetch.response.max.bytes
  int64_t fetch_backoff_ms = 1000;             // replica.fetch.backoff.ms
  int64_t socket_timeout_ms = 30000;           // replica.socket.timeout.ms
};

// Where a leader is reached (its inter-broker listener).
struct LeaderEndpoint {
  NodeId id = kNoNode;
  std::string host;
  uint16_t port = 0;
  bool operator==(const LeaderEndpoint&) const = default;
};

// What a fetcher needs from the broker around it.
struct ReplicaFetcherContext {
  Runtime* runtime = nullptr;
  ReplicaFetcherConfig config;
  NodeId self = kNoNode;
  // Our broker epoch for ReplicaState (-1 if not known).
  std::function<BrokerEpoch()> broker_epoch;
  // The partition, if this broker still holds it.
  std::function<Partition*(const TopicPartition&)> partition;
};

class ReplicaFetcher {
 public:
  ReplicaFetcher(const ReplicaFetcherContext& context, LeaderEndpoint leader, int32_t fetcher_id);
  ~ReplicaFetcher();
  ReplicaFetcher(const ReplicaFetcher&) = delete;
  ReplicaFetcher& operator=(const ReplicaFetcher&) = delete;

  void add_partition(const TopicPartition& tp);
  void remove_partition(const TopicPartition& tp);
  bool empty() const { return partitions_.empty(); }
  bool has_partition(const TopicPartition& tp) const { return partitions_.contains(tp); }
  const LeaderEndpoint& leader() const { return leader_; }

  // For tests and logs.
  uint64_t fetches_sent() const { return fetches_sent_; }
  uint64_t failures() const { return failures_; }

 private:
  struct PartitionState {
    int64_t delayed_until_ms = 0;  // after an error: replica.fetch.backoff.ms
  };
  // What one request asked for one partition.
  struct Asked {
    TopicPartition tp;
    LeaderEpoch epoch;
    Offset fetch_offset;
  };

  void schedule(int64_t delay_ms);
  void step();
  void connect();
  std::optional<protocol::FetchRequest> build_request(std::map<std::pair<Uuid, int32_t>, Asked>& asked);
  void on_response(Result<protocol::FetchResponse> response, const std::map<std::pair<Uuid, int32_t>, Asked>& asked);
  void handle_partition(const Asked& asked, const protocol::FetchResponse::PartitionData& data);
  void delay_partition(const TopicPartition& tp);
  void fail_connection(const std::string& why);

  ReplicaFetcherContext context_;
  LeaderEndpoint leader_;
  int32_t fetcher_id_;
  std::map<TopicPartition, PartitionState> partitions_;
  std::unique_ptr<KafkaClient> client_;
  bool connecting_ = false;
  bool in_flight_ = false;
  TimerId step_timer_ = 0;
  TimerId timeout_timer_ = 0;
  int64_t backoff_until_ms_ = 0;
  uint64_t fetches_sent_ = 0;
  uint64_t failures_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

class ReplicaFetcherManager {
 public:
  explicit ReplicaFetcherManager(ReplicaFetcherContext context) : context_(std::move(context)) {}

  // Fetch tp from `leader` (moving it off any other fetcher).
  void add(const TopicPartition& tp, const LeaderEndpoint& leader);
  void remove(const TopicPartition& tp);
  // The fetcher of tp, if any (tests).
  const ReplicaFetcher* fetcher_of(const TopicPartition& tp) const;
  size_t fetcher_count() const { return fetchers_.size(); }

 private:
  using Key = std::pair<NodeId, int32_t>;  // (source broker, fetcher id)
  int32_t fetcher_id(const TopicPartition& tp) const;

  ReplicaFetcherContext context_;
  std::map<Key, std::unique_ptr<ReplicaFetcher>> fetchers_;
  std::map<TopicPartition, Key> assigned_;
};

}  // namespace samsa

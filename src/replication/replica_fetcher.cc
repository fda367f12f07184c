#include "replication/replica_fetcher.h"

#include <functional>

#include "base/log.h"
#include "protocol/error_code.h"

namespace samsa {

using protocol::ErrorCode;
using protocol::FetchRequest;
using protocol::FetchResponse;

namespace {
// Fetch v18: ReplicaState (v15, KIP-903), topic ids (v13), the follower's
// HW in each partition (KIP-1166). Samsa brokers all speak it; a mixed
// cluster with Kafka brokers would negotiate with ApiVersions first.
constexpr int16_t kFetchVersion = 18;
}  // namespace

ReplicaFetcher::ReplicaFetcher(const ReplicaFetcherContext& context, LeaderEndpoint leader, int32_t fetcher_id)
    : context_(context), leader_(std::move(leader)), fetcher_id_(fetcher_id) {}

ReplicaFetcher::~ReplicaFetcher() {
  *alive_ = false;
  if (step_timer_) context_.runtime->cancel_timer(step_timer_);
  if (timeout_timer_) context_.runtime->cancel_timer(timeout_timer_);
}

void ReplicaFetcher::add_partition(const TopicPartition& tp) {
  partitions_[tp] = PartitionState{};
  if (!in_flight_) schedule(0);
}

// An answer in flight for it is dropped when it comes (handle_partition
// finds the partition gone from this fetcher).
void ReplicaFetcher::remove_partition(const TopicPartition& tp) { partitions_.erase(tp); }

void ReplicaFetcher::schedule(int64_t delay_ms) {
  if (step_timer_) context_.runtime->cancel_timer(step_timer_);
  std::weak_ptr<bool> alive = alive_;
  step_timer_ = context_.runtime->add_timer(delay_ms, [this, alive] {
    if (alive.expired()) return;
    step_timer_ = 0;
    step();
  });
}

// One fetch round: dial if needed, then send one request for every
// partition that is not backing off.
void ReplicaFetcher::step() {
  if (in_flight_ || connecting_ || partitions_.empty()) return;
  const int64_t now = context_.runtime->now_ms();
  if (now < backoff_until_ms_) return schedule(backoff_until_ms_ - now);
  if (!client_ || !client_->connected()) return connect();
  auto asked = std::make_shared<std::map<std::pair<Uuid, int32_t>, Asked>>();
  std::optional<FetchRequest> request = build_request(*asked);
  if (!request) {
    // Every partition backs off (or none is fetchable): wake at the first.
    int64_t next = INT64_MAX;
    for (const auto& [tp, st] : partitions_) next = std::min(next, st.delayed_until_ms);
    if (next != INT64_MAX) schedule(std::max<int64_t>(next - now, 1));
    return;
  }
  in_flight_ = true;
  ++fetches_sent_;
  std::weak_ptr<bool> alive = alive_;
  // The leader may hold the request for wait.max.ms; no answer well after
  // that is a dead connection.
  timeout_timer_ = context_.runtime->add_timer(context_.config.fetch_wait_max_ms + context_.config.socket_timeout_ms,
                                               [this, alive] {
                                                 if (alive.expired()) return;
                                                 timeout_timer_ = 0;
                                                 fail_connection("no answer within replica.socket.timeout.ms");
                                               });
  client_->call<FetchRequest, FetchResponse>(*request, kFetchVersion,
                                             [this, alive, asked](Result<FetchResponse> response) {
                                               if (alive.expired()) return;
                                               on_response(std::move(response), *asked);
                                             });
}

void ReplicaFetcher::connect() {
  client_ = std::make_unique<KafkaClient>(*context_.runtime,
                                          "replica-fetcher-" + std::to_string(context_.self.value()) + "-" +
                                              std::to_string(fetcher_id_));
  connecting_ = true;
  std::weak_ptr<bool> alive = alive_;
  client_->connect(leader_.host, leader_.port, context_.config.socket_timeout_ms, [this, alive](Status st) {
    if (alive.expired()) return;
    connecting_ = false;
    if (!st.ok()) return fail_connection("connect to " + leader_.host + ":" + std::to_string(leader_.port) +
                                         " failed: " + st.error().to_string());
    step();
  });
}

std::optional<FetchRequest> ReplicaFetcher::build_request(std::map<std::pair<Uuid, int32_t>, Asked>& asked) {
  const int64_t now = context_.runtime->now_ms();
  FetchRequest request;
  request.replica_state.replica_id = context_.self.value();
  request.replica_state.replica_epoch = context_.broker_epoch ? context_.broker_epoch().value() : -1;
  request.max_wait_ms = context_.config.fetch_wait_max_ms;
  request.min_bytes = context_.config.fetch_min_bytes;
  request.max_bytes = context_.config.fetch_response_max_bytes;
  request.session_id = 0;  // no fetch session: every fetch is a full one
  request.session_epoch = -1;
  std::map<Uuid, size_t> topic_index;
  for (const auto& [tp, st] : partitions_) {
    if (st.delayed_until_ms > now) continue;
    Partition* p = context_.partition(tp);
    if (!p || !p->is_follower() || p->leader() != leader_.id) continue;
    replication::FetchPosition pos = p->fetch_position();
    auto [it, added] = topic_index.try_emplace(p->topic_id(), request.topics.size());
    if (added) {
      FetchRequest::FetchTopic topic;
      topic.topic = tp.topic;
      topic.topic_id = p->topic_id();
      request.topics.push_back(std::move(topic));
    }
    FetchRequest::FetchPartition fp;
    fp.partition = tp.partition.value();
    fp.current_leader_epoch = pos.current_leader_epoch.value();
    fp.fetch_offset = pos.fetch_offset.value();
    fp.last_fetched_epoch = pos.last_fetched_epoch ? pos.last_fetched_epoch->value() : -1;
    fp.log_start_offset = p->log().log_start_offset().value();
    fp.partition_max_bytes = context_.config.fetch_max_bytes;
    fp.high_watermark = p->high_watermark().value();
    request.topics[it->second].partitions.push_back(fp);
    asked.emplace(std::make_pair(p->topic_id(), fp.partition), Asked{tp, pos.current_leader_epoch, pos.fetch_offset});
  }
  if (asked.empty()) return std::nullopt;
  return request;
}

void ReplicaFetcher::on_response(Result<FetchResponse> response,
                                 const std::map<std::pair<Uuid, int32_t>, Asked>& asked) {
  in_flight_ = false;
  if (timeout_timer_) context_.runtime->cancel_timer(timeout_timer_);
  timeout_timer_ = 0;
  if (!response.ok()) return fail_connection(response.error().to_string());
  if (response->error_code != 0) {
    LOG_WARN("replicas", "fetch from broker {} failed: {}", leader_.id.value(),
             protocol::error_name(response->error_code));
    backoff_until_ms_ = context_.runtime->now_ms() + context_.config.fetch_backoff_ms;
    return schedule(context_.config.fetch_backoff_ms);
  }
  for (const auto& topic : response->responses) {
    for (const auto& data : topic.partitions) {
      auto it = asked.find({topic.topic_id, data.partition_index});
      if (it != asked.end()) handle_partition(it->second, data);
    }
  }
  schedule(0);
}

// AbstractFetcherThread.processFetchRequest, one partition.
void ReplicaFetcher::handle_partition(const Asked& asked, const FetchResponse::PartitionData& data) {
  if (!partitions_.contains(asked.tp)) return;
  Partition* p = context_.partition(asked.tp);
  if (!p || !p->is_follower() || p->leader() != leader_.id || p->leader_epoch() != asked.epoch ||
      p->log().log_end_offset() != asked.fetch_offset) {
    return;  // moved on since the request: the next one asks afresh
  }
  const ErrorCode error = ErrorCode(data.error_code);
  if (error == ErrorCode::kOffsetOutOfRange) {
    p->on_fetch_out_of_range(Offset(data.log_start_offset), Offset(data.high_watermark));
    return;
  }
  if (error != ErrorCode::kNone) {
    LOG_DEBUG("replicas", "{}: fetch from broker {}: {}", asked.tp.to_string(), leader_.id.value(),
              protocol::error_name(error));
    return delay_partition(asked.tp);
  }
  if (data.diverging_epoch.epoch >= 0 || data.diverging_epoch.end_offset >= 0) {
    LOG_INFO("replicas", "{}: the leader's log diverges from epoch {} at offset {}", asked.tp.to_string(),
             data.diverging_epoch.epoch, data.diverging_epoch.end_offset);
    p->on_diverging_epoch({LeaderEpoch(data.diverging_epoch.epoch), Offset(data.diverging_epoch.end_offset)});
    return;  // its watermarks are not ours to take before truncating (KAFKA-14704)
  }
  if (data.records.size() > 0) {
    Result<FollowerAppendResult> appended = p->append_as_follower(data.records.bytes());
    if (!appended.ok()) {
      LOG_WARN("replicas", "{}: appending what broker {} sent failed: {}", asked.tp.to_string(), leader_.id.value(),
               appended.error().to_string());
      return delay_partition(asked.tp);
    }
  }
  p->on_leader_high_watermark(Offset(data.high_watermark));
}

void ReplicaFetcher::delay_partition(const TopicPartition& tp) {
  auto it = partitions_.find(tp);
  if (it != partitions_.end()) it->second.delayed_until_ms = context_.runtime->now_ms() + context_.config.fetch_backoff_ms;
}

void ReplicaFetcher::fail_connection(const std::string& why) {
  ++failures_;
  LOG_INFO("replicas", "fetcher {} for broker {}: {}; retrying in {} ms", fetcher_id_, leader_.id.value(), why,
           context_.config.fetch_backoff_ms);
  in_flight_ = false;
  connecting_ = false;
  if (timeout_timer_) context_.runtime->cancel_timer(timeout_timer_);
  timeout_timer_ = 0;
  if (client_) {
    // Closing fails what is outstanding through callbacks that find
    // in_flight_ cleared; the client goes from a posted task, never from
    // inside its own callback.
    std::shared_ptr<KafkaClient> doomed(std::move(client_));
    doomed->close();
    context_.runtime->post([doomed] {});
  }
  backoff_until_ms_ = context_.runtime->now_ms() + context_.config.fetch_backoff_ms;
  schedule(context_.config.fetch_backoff_ms);
}

// --- ReplicaFetcherManager ---------------------------------------------------

// AbstractFetcherManager.getFetcherId: Utils.abs(31 * topic.hashCode +
// partition) % numFetchers; any stable hash serves (it only spreads load).
int32_t ReplicaFetcherManager::fetcher_id(const TopicPartition& tp) const {
  const int32_t n = std::max(1, context_.config.num_fetchers);
  uint64_t h = 0;
  for (unsigned char c : tp.topic) h = h * 31 + c;
  h = h * 31 + uint64_t(uint32_t(tp.partition.value()));
  return int32_t(h % uint64_t(n));
}

void ReplicaFetcherManager::add(const TopicPartition& tp, const LeaderEndpoint& leader) {
  Key key{leader.id, fetcher_id(tp)};
  auto current = assigned_.find(tp);
  if (current != assigned_.end() && current->second == key && fetchers_.at(key)->leader() == leader) {
    fetchers_.at(key)->add_partition(tp);  // same leader, maybe a new epoch: fetch afresh
    return;
  }
  remove(tp);
  auto it = fetchers_.find(key);
  std::vector<TopicPartition> moved;
  if (it != fetchers_.end() && !(it->second->leader() == leader)) {
    // The broker moved to another endpoint: a new connection for all.
    LOG_INFO("replicas", "broker {} is now at {}:{}", leader.id.value(), leader.host, leader.port);
    for (const auto& [other, k] : assigned_) {
      if (k == key) moved.push_back(other);
    }
    fetchers_.erase(it);
    it = fetchers_.end();
  }
  if (it == fetchers_.end()) {
    it = fetchers_.emplace(key, std::make_unique<ReplicaFetcher>(context_, leader, key.second)).first;
  }
  for (const TopicPartition& other : moved) it->second->add_partition(other);
  it->second->add_partition(tp);
  assigned_[tp] = key;
}

void ReplicaFetcherManager::remove(const TopicPartition& tp) {
  auto a = assigned_.find(tp);
  if (a == assigned_.end()) return;
  auto it = fetchers_.find(a->second);
  assigned_.erase(a);
  if (it == fetchers_.end()) return;
  it->second->remove_partition(tp);
  if (it->second->empty()) fetchers_.erase(it);
}

const ReplicaFetcher* ReplicaFetcherManager::fetcher_of(const TopicPartition& tp) const {
  auto a = assigned_.find(tp);
  if (a == assigned_.end()) return nullptr;
  auto it = fetchers_.find(a->second);
  return it == fetchers_.end() ? nullptr : it->second.get();
}

}  // namespace samsa

#include "broker/group_manager.h"

#include <algorithm>

#include "base/file_region.h"
#include "base/log.h"
#include "broker/broker.h"
#include "model/record.h"
#include "model/record_batch.h"
#include "model/record_batch_builder.h"
#include "storage/log_batches.h"

namespace samsa {
namespace {

using protocol::ErrorCode;

// offsets.retention.check.interval.ms (Kafka's default).
constexpr int64_t kExpiryIntervalMs = 600000;
constexpr int32_t kLoadReadBytes = 5 * 1024 * 1024;  // offsets.load.buffer.size

group::CoordinatorConfig coordinator_config(const BrokerConfig& c, int32_t partitions) {
  group::CoordinatorConfig out;
  out.min_session_timeout_ms = c.group_min_session_timeout_ms;
  out.max_session_timeout_ms = c.group_max_session_timeout_ms;
  out.initial_rebalance_delay_ms = c.group_initial_rebalance_delay_ms;
  out.max_size = c.group_max_size;
  out.offsets_retention_ms = c.offsets_retention_ms;
  out.offsets_partitions = partitions;
  return out;
}

}  // namespace

GroupManager::GroupManager(Broker& broker) : broker_(broker) {}
GroupManager::~GroupManager() = default;

int64_t GroupManager::now_ms() const { return broker_.clock().wall_ms(); }

Status GroupManager::start() {
  // The partition count is fixed at startup: the existing topic's, else the
  // configured one for when it is created (Kafka's rule).
  const TopicState* topic = broker_.image().topic(kOffsetsTopic);
  int32_t partitions = topic ? int32_t(topic->partitions.size()) : broker_.config().offsets_topic_num_partitions;
  coordinator_ = std::make_unique<group::GroupCoordinator>(
      coordinator_config(broker_.config(), partitions), broker_.rng(),
      [this](int32_t p, const std::vector<group::OffsetsRecord>& records) { return append(p, records); });
  commit_timeout_ms_ = broker_.config().values().get_int("offsets.commit.timeout.ms");
  int64_t started = now_ms();
  for (int32_t p = 0; topic && p < partitions; ++p) {
    if (!leads(p)) continue;
    RETURN_IF_ERROR(load_partition(p));
    loaded_.insert(p);
  }
  coordinator_->finish_loading(now_ms());
  if (topic) {
    LOG_INFO("group", "loaded {} groups from {} in {} ms", coordinator_->groups().size(), kOffsetsTopic,
             now_ms() - started);
  }
  schedule_offsets_expiry();
  rearm();
  return ok_status();
}

void GroupManager::stop() {
  for (TimerId* timer : {&deadline_timer_, &rearm_timer_, &offsets_expiry_timer_}) {
    if (*timer) broker_.runtime().cancel_timer(*timer);
    *timer = 0;
  }
}

Status GroupManager::ensure_topic() {
  if (broker_.image().topic(kOffsetsTopic)) return ok_status();
  const BrokerConfig& c = broker_.config();
  // offsets.topic.replication.factor as configured: with fewer brokers
  // registered the placer refuses (INVALID_REPLICATION_FACTOR) and groups
  // get COORDINATOR_NOT_AVAILABLE until enough brokers exist, as in Kafka;
  // the topic is never created with fewer replicas for ever.
  NewTopic topic;
  topic.name = kOffsetsTopic;
  topic.num_partitions = coordinator_->config().offsets_partitions;
  topic.replication_factor = c.offsets_topic_replication_factor;
  topic.configs = {{"cleanup.policy", "compact"}, {"compression.type", "producer"}};
  // The outcome, when it is known at once (a refusal; the single node
  // commits inline). While the creation is in flight the topic is not in
  // the image and groups get COORDINATOR_NOT_AVAILABLE, as in Kafka; a
  // second request meanwhile finds it in the controller's view (TOPIC_ALREADY_EXISTS).
  auto outcome = std::make_shared<std::optional<std::optional<ControllerError>>>();
  broker_.create_topic(topic, false, 0, [outcome](std::optional<ControllerError> failed) { *outcome = failed; });
  if (!outcome->has_value()) return ok_status();
  const std::optional<ControllerError>& failed = **outcome;
  if (failed && failed->code != ErrorCode::kTopicAlreadyExists) {
    return Error(ErrorKind::kInvalidArgument, "creating " + std::string(kOffsetsTopic) + ": " + failed->message);
  }
  return ok_status();
}

Status GroupManager::load_partition(int32_t partition) {
  Partition* p = broker_.replicas().get(TopicPartition{kOffsetsTopic, PartitionId(partition)});
  if (!p) return ok_status();
  auto loaded = for_each_batch(p->log(), kLoadReadBytes, [&](const BatchRef& batch) -> Status {
    if (batch.header.is_control()) return ok_status();
    ASSIGN_OR_RETURN(auto records, RecordIterator::open(batch.bytes));
    Record r;
    while (records.next(r)) {
      if (!r.key) continue;
      auto decoded = group::decode_record(*r.key, r.value);
      if (decoded) coordinator_->load(*decoded);
    }
    return ok_status();
  });
  return loaded.ok() ? ok_status() : Status(loaded.error());
}

ErrorCode GroupManager::append(int32_t partition, const std::vector<group::OffsetsRecord>& records) {
  Partition* p = broker_.replicas().get(TopicPartition{kOffsetsTopic, PartitionId(partition)});
  if (!p) return ErrorCode::kUnknownTopicOrPartition;
  if (!p->is_leader()) return ErrorCode::kNotLeaderOrFollower;
  RecordBatchBuilder builder;
  int64_t now = now_ms();
  for (const auto& record : records) {
    Bytes key = group::encode_key(record);
    std::optional<Bytes> value = group::encode_value(record);
    builder.add(now, ByteView(key), value ? std::optional<ByteView>(ByteView(*value)) : std::nullopt);
  }
  auto batch = builder.build();
  if (!batch.ok()) return ErrorCode::kUnknownServerError;
  auto appended = p->append_as_leader(batch->data(), batch->size());
  if (!appended.ok()) {
    LOG_WARN("group", "append to {}-{} failed: {}", kOffsetsTopic, partition, appended.error().to_string());
    return ErrorCode::kKafkaStorageError;
  }
  broker_.fetch_waiters().notify(p->topic_partition());
  last_append_ = ProduceWait{p->topic_partition(), Offset(appended->last_offset.value() + 1)};
  return ErrorCode::kNone;
}

bool GroupManager::leads(int32_t partition) {
  Partition* p = broker_.replicas().get(TopicPartition{kOffsetsTopic, PartitionId(partition)});
  return p && p->is_leader();
}

void GroupManager::follow_leadership() {
  if (!coordinator_) return;
  const TopicState* topic = broker_.image().topic(kOffsetsTopic);
  const int32_t partitions = coordinator_->config().offsets_partitions;
  for (int32_t p = 0; p < partitions; ++p) {
    const bool led = topic && leads(p);
    if (led == loaded_.contains(p)) continue;
    if (!led) {
      coordinator_->unload_partition(p);
      loaded_.erase(p);
      LOG_INFO("group", "{}-{}: no longer its leader, its groups unloaded", kOffsetsTopic, p);
      continue;
    }
    int64_t started = now_ms();
    Status loaded = load_partition(p);
    coordinator_->finish_loading(now_ms());
    if (!loaded.ok()) {
      // Retried at the next change of the replicas; its groups get
      // COORDINATOR_LOAD_IN_PROGRESS meanwhile.
      LOG_ERROR("group", "{}-{}: loading its groups failed: {}", kOffsetsTopic, p, loaded.error().to_string());
      coordinator_->unload_partition(p);
      continue;
    }
    loaded_.insert(p);
    LOG_INFO("group", "{}-{}: now its leader, its groups loaded in {} ms", kOffsetsTopic, p, now_ms() - started);
  }
  rearm_soon();
}

ErrorCode GroupManager::check_coordinator(const std::string& group_id) {
  if (!coordinator_) return ErrorCode::kCoordinatorNotAvailable;
  int32_t node = coordinator_node(group_id);
  if (node < 0) return ErrorCode::kCoordinatorNotAvailable;
  if (node != broker_.node_id().value()) return ErrorCode::kNotCoordinator;
  // Named leader by the image, but the local replica has not taken the
  // leadership up (its log not open yet) or its groups are not loaded.
  return loaded_.contains(coordinator_->partition_for(group_id)) ? ErrorCode::kNone
                                                                 : ErrorCode::kCoordinatorLoadInProgress;
}

int32_t GroupManager::coordinator_node(const std::string& group_id) {
  // Created on first use, as Kafka does on the first FindCoordinator.
  if (!broker_.image().topic(kOffsetsTopic)) {
    Status created = ensure_topic();
    std::string refusal = created.ok() ? "" : created.error().message();
    if (!refusal.empty() && refusal != offsets_topic_refusal_) {
      LOG_WARN("group", "cannot create {} (groups get COORDINATOR_NOT_AVAILABLE until it exists): {}", kOffsetsTopic,
               refusal);
    }
    offsets_topic_refusal_ = refusal;
  }
  const TopicState* topic = broker_.image().topic(kOffsetsTopic);
  if (!topic || topic->partitions.empty()) return -1;
  int32_t p = group::partition_for(group_id, int32_t(topic->partitions.size()));
  NodeId leader = topic->partitions[size_t(p)].leader;
  return leader == kNoNode ? -1 : leader.value();
}

void GroupManager::schedule_offsets_expiry() {
  offsets_expiry_timer_ = broker_.runtime().add_timer(kExpiryIntervalMs, [this] {
    coordinator_->expire_offsets(now_ms());
    schedule_offsets_expiry();
  });
}

void GroupManager::rearm_soon() {
  if (rearm_timer_ || !coordinator_) return;
  rearm_timer_ = broker_.runtime().add_timer(0, [this] {
    rearm_timer_ = 0;
    rearm();
  });
}

void GroupManager::rearm() {
  std::optional<int64_t> next = coordinator_->next_deadline_ms();
  // An armed timer at or before the next deadline stays: if it fires early,
  // tick() finds nothing due and rearm() runs again.
  if (deadline_timer_ && next && deadline_timer_at_ms_ <= *next) return;
  if (deadline_timer_) broker_.runtime().cancel_timer(deadline_timer_);
  deadline_timer_ = 0;
  if (!next) return;
  // Deadlines are wall-clock ms (now_ms); the loop's timer waits at least
  // the delay, so now_ms() >= *next when it fires (unless the wall clock
  // stepped back, and then the next rearm waits again).
  int64_t delay_ms = std::max<int64_t>(0, *next - now_ms());
  deadline_timer_at_ms_ = *next;
  deadline_timer_ = broker_.runtime().add_timer(delay_ms, [this] { on_deadline_timer(); });
}

void GroupManager::on_deadline_timer() {
  deadline_timer_ = 0;
  coordinator_->tick(now_ms());
  rearm();
}

}  // namespace samsa

#include "broker/replica_manager.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "base/log.h"

namespace samsa {

namespace {
// The partitions the image assigns to `self`, with their topic ids.
std::map<TopicPartition, Uuid> assigned_to(const MetadataImage& image, NodeId self) {
  std::map<TopicPartition, Uuid> out;
  for (const auto& [name, topic] : image.topics()) {
    for (const PartitionState& p : topic.partitions) {
      if (std::find(p.replicas.begin(), p.replicas.end(), self) == p.replicas.end()) continue;
      out.emplace(TopicPartition{name, p.partition}, topic.id);
    }
  }
  return out;
}
}  // namespace

// Removals first, then creations: a topic deleted and re-created under the
// same name (one image apart, or while this broker was down) gets a new
// log, never the old one's directory.
Status ReplicaManager::apply_image(const MetadataImage& image) {
  std::map<TopicPartition, Uuid> assigned = assigned_to(image, self_);
  for (auto it = partitions_.begin(); it != partitions_.end();) {
    auto want = assigned.find(it->first);
    if (want != assigned.end() && want->second == it->second->topic_id()) {
      ++it;
      continue;
    }
    LOG_INFO("replicas", "{} (topic id {}) is no longer assigned here", it->first.to_string(),
             it->second->topic_id().to_string());
    if (fetchers_) fetchers_->remove(it->first);
    it = partitions_.erase(it);  // before its Log goes
  }
  // Logs of those partitions, and any the metadata does not assign here by
  // topic id (left on disk by a crash during a deletion).
  Status removed = logs_.remove_stray_logs(assigned);
  std::vector<const TopicState*> topics;
  for (const auto& [name, topic] : image.topics()) topics.push_back(&topic);
  open_partitions(image, topics);
  std::erase_if(unopened_, [&](const TopicPartition& tp) { return !assigned.contains(tp); });
  return removed;
}

void ReplicaManager::apply_topics(const MetadataImage& image, const std::set<std::string>& names) {
  std::vector<const TopicState*> topics;
  for (const auto& name : names) {
    if (const TopicState* t = image.topic(name)) topics.push_back(t);
  }
  open_partitions(image, topics);
}

// Creates the logs of these topics' partitions assigned here and updates the
// partitions held (config, leader, epoch, ISR).
void ReplicaManager::open_partitions(const MetadataImage& image, const std::vector<const TopicState*>& topics) {
  const bool had_unopened = !unopened_.empty();
  size_t newly_unopened = 0;
  std::optional<std::string> first_failure;  // of those
  for (const TopicState* t : topics) {
    const TopicState& topic = *t;
    LogConfig config = log_config_(topic);
    for (const PartitionState& p : topic.partitions) {
      TopicPartition tp{topic.name, p.partition};
      if (std::find(p.replicas.begin(), p.replicas.end(), self_) == p.replicas.end()) continue;
      auto it = partitions_.find(tp);
      if (it == partitions_.end()) {
        Result<Log*> log = logs_.create_log(tp, config, topic.id);
        if (!log.ok()) {
          if (unopened_.insert(tp).second && newly_unopened++ == 0) {
            first_failure = tp.to_string() + ": " + log.error().to_string();
          }
          continue;
        }
        unopened_.erase(tp);
        it = partitions_
                 .emplace(tp, std::make_unique<Partition>(tp, topic.id, **log, self_,
                                                          logs_.checkpointed_high_watermark(tp), logs_.clock(),
                                                          replica_lag_time_max_ms_))
                 .first;
        it->second->set_high_watermark_listener(on_high_watermark_);
        it->second->set_alter_partition_listener(
            [this](Partition& p, const replication::AlterPartitionProposal& proposal) {
              send_alter_partition(p, proposal);
            });
      } else {
        it->second->log().set_config(config);
      }
      it->second->update_state(p);
      it->second->update_brokers(image);
      if (fetchers_ && !it->second->is_follower()) fetchers_->remove(tp);
    }
  }
  // One WARN when a shortage starts and one INFO when it is over, not a line
  // per partition (a burst of topic creations is one commit per topic).
  if (first_failure && unopened_.size() == newly_unopened) {
    LOG_WARN("replicas", "cannot create the logs of {} partitions now, will retry every second until it works; "
             "first: {}", newly_unopened, *first_failure);
  } else if (first_failure) {
    LOG_DEBUG("replicas", "{} more partitions wait for their logs ({} in all); first: {}", newly_unopened,
              unopened_.size(), *first_failure);
  } else if (unopened_.empty() && had_unopened) {
    LOG_INFO("replicas", "every waiting partition log is created now");
  }
}

void ReplicaManager::set_high_watermark_listener(std::function<void(const TopicPartition&)> listener) {
  on_high_watermark_ = std::move(listener);
  for (auto& [tp, p] : partitions_) p->set_high_watermark_listener(on_high_watermark_);
}

void ReplicaManager::start_fetchers(const ReplicaFetcherConfig& config, Runtime& runtime,
                                    std::function<BrokerEpoch()> broker_epoch) {
  ReplicaFetcherContext context;
  context.runtime = &runtime;
  context.config = config;
  context.self = self_;
  context.broker_epoch = std::move(broker_epoch);
  context.partition = [this](const TopicPartition& tp) { return get(tp); };
  fetchers_ = std::make_unique<ReplicaFetcherManager>(std::move(context));
}

Status ReplicaManager::become_follower(const TopicPartition& tp, const LeaderEndpoint& leader, LeaderEpoch epoch) {
  Partition* p = get(tp);
  if (!p) return Error(ErrorKind::kNotFound, tp.to_string() + " is not held here");
  if (!fetchers_) return Error(ErrorKind::kClosed, "replica fetchers are not running");
  if (leader.id == self_) return Error(ErrorKind::kInvalidArgument, "a broker does not follow itself");
  if (epoch < p->leader_epoch()) {
    return Error(ErrorKind::kInvalidArgument, tp.to_string() + ": leader epoch " + std::to_string(epoch.value()) +
                                                  " is older than " + std::to_string(p->leader_epoch().value()));
  }
  if (!p->is_follower() || p->leader() != leader.id || p->leader_epoch() != epoch) p->make_follower(leader.id, epoch);
  LOG_INFO("replicas", "{} follows broker {} ({}:{}) in leader epoch {}", tp.to_string(), leader.id.value(),
           leader.host, leader.port, epoch.value());
  fetchers_->add(tp, leader);
  return ok_status();
}

Status ReplicaManager::become_leader(const TopicPartition& tp, LeaderEpoch epoch) {
  Partition* p = get(tp);
  if (!p) return Error(ErrorKind::kNotFound, tp.to_string() + " is not held here");
  if (epoch < p->leader_epoch()) {
    return Error(ErrorKind::kInvalidArgument, tp.to_string() + ": leader epoch " + std::to_string(epoch.value()) +
                                                  " is older than " + std::to_string(p->leader_epoch().value()));
  }
  if (fetchers_) fetchers_->remove(tp);
  if (!p->is_leader() || p->leader_epoch() != epoch) p->make_leader(epoch);
  return ok_status();
}

ReplicaManager::~ReplicaManager() {
  *alive_ = false;
  if (!runtime_) return;
  if (isr_expiration_timer_) runtime_->cancel_timer(isr_expiration_timer_);
  for (TimerId t : retry_timers_) runtime_->cancel_timer(t);
}

void ReplicaManager::start_isr_management(Runtime& runtime, int64_t replica_lag_time_max_ms,
                                          AlterPartitionSender sender, std::function<BrokerEpoch()> broker_epoch) {
  stop_isr_management();  // a second call replaces the first (tests plug other channels in)
  runtime_ = &runtime;
  produce_purgatory_.attach(runtime);
  replica_lag_time_max_ms_ = std::max<int64_t>(replica_lag_time_max_ms, 2);
  alter_partition_sender_ = std::move(sender);
  broker_epoch_ = std::move(broker_epoch);
  schedule_isr_expiration();
}

void ReplicaManager::stop_isr_management() {
  if (!runtime_) return;
  if (isr_expiration_timer_) runtime_->cancel_timer(isr_expiration_timer_);
  isr_expiration_timer_ = 0;
  for (TimerId t : retry_timers_) runtime_->cancel_timer(t);
  retry_timers_.clear();
  alter_partition_sender_ = nullptr;
  *alive_ = false;
  alive_ = std::make_shared<bool>(true);
}

// ReplicaManager.startup's "isr-expiration" task (Kafka: every
// replica.lag.time.max.ms / 2).
void ReplicaManager::schedule_isr_expiration() {
  isr_expiration_timer_ = runtime_->add_timer(replica_lag_time_max_ms_ / 2, [this] {
    isr_expiration_timer_ = 0;
    check_isr_expiration();
    schedule_isr_expiration();
  });
}

void ReplicaManager::check_isr_expiration() {
  for (auto& [tp, p] : partitions_) {
    if (p->is_leader()) p->tick();
  }
}

void ReplicaManager::apply_brokers(const MetadataImage& image) {
  for (auto& [tp, p] : partitions_) p->update_brokers(image);
}

// Partition.submitAlterPartition through the injected channel. Posted, so
// that a controller answering inline (the single node commits at once)
// never re-enters the partition in the middle of its Ready; the answer goes
// to the partition by name, if it is still the same one.
void ReplicaManager::send_alter_partition(Partition& partition, const replication::AlterPartitionProposal& proposal) {
  if (!alter_partition_sender_ || !runtime_) {
    LOG_DEBUG("replicas", "{}: an ISR change was proposed while no AlterPartition channel is set",
              partition.topic_partition().to_string());
    return;
  }
  TopicPartition tp = partition.topic_partition();
  Uuid topic_id = partition.topic_id();
  std::string isr;
  for (const auto& m : proposal.new_isr) isr += (isr.empty() ? "" : ",") + std::to_string(m.id.value());
  LOG_INFO("replicas", "{}: proposing ISR [{}] to the controller ({}, partition epoch {})", tp.to_string(), isr,
           proposal.expand ? "expand" : "shrink", proposal.partition_epoch.value());
  runtime_->post([this, alive = alive_, tp, topic_id, proposal] {
    if (!*alive || !alter_partition_sender_) return;
    protocol::AlterPartitionRequest request =
        to_alter_partition_request(self_, broker_epoch_ ? broker_epoch_() : kNoBrokerEpoch, topic_id, tp.partition,
                                   proposal);
    alter_partition_sender_(request, kAlterPartitionVersion,
                            [this, alive, tp, topic_id, id = proposal.id](Result<protocol::AlterPartitionResponse> r) {
                              if (!*alive) return;
                              Partition* p = get(tp);
                              if (!p || p->topic_id() != topic_id) return;
                              AlterPartitionAnswer answer = from_alter_partition_response(r, topic_id, tp.partition);
                              if (std::holds_alternative<replication::AlterPartitionError>(answer) &&
                                  std::get<replication::AlterPartitionError>(answer) ==
                                      replication::AlterPartitionError::kRetriable) {
                                retry_alter_partition(tp, topic_id, id);
                                return;
                              }
                              p->on_alter_partition_answer(id, answer);
                            });
  });
}

// AlterPartitionManager's retry: the same proposal again after a backoff,
// if it is still the pending one (the core resends it on kRetriable).
void ReplicaManager::retry_alter_partition(const TopicPartition& tp, const Uuid& topic_id, uint64_t proposal_id) {
  auto timer = std::make_shared<TimerId>(0);
  *timer = runtime_->add_timer(kAlterPartitionRetryMs, [this, timer, tp, topic_id, proposal_id] {
    retry_timers_.erase(*timer);
    Partition* p = get(tp);
    if (!p || p->topic_id() != topic_id) return;
    p->on_alter_partition_answer(proposal_id, replication::AlterPartitionError::kRetriable);
  });
  retry_timers_.insert(*timer);
}

Partition* ReplicaManager::get(const TopicPartition& tp) {
  auto it = partitions_.find(tp);
  return it == partitions_.end() ? nullptr : it->second.get();
}

}  // namespace samsa

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
  open_partitions(topics);
  std::erase_if(unopened_, [&](const TopicPartition& tp) { return !assigned.contains(tp); });
  return removed;
}

void ReplicaManager::apply_topics(const MetadataImage& image, const std::set<std::string>& names) {
  std::vector<const TopicState*> topics;
  for (const auto& name : names) {
    if (const TopicState* t = image.topic(name)) topics.push_back(t);
  }
  open_partitions(topics);
}

// Creates the logs of these topics' partitions assigned here and updates the
// partitions held (config, leader, epoch, ISR).
void ReplicaManager::open_partitions(const std::vector<const TopicState*>& topics) {
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
                                                          logs_.checkpointed_high_watermark(tp), logs_.clock()))
                 .first;
        it->second->set_high_watermark_listener(on_high_watermark_);
      } else {
        it->second->log().set_config(config);
      }
      it->second->update_state(p);
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

Partition* ReplicaManager::get(const TopicPartition& tp) {
  auto it = partitions_.find(tp);
  return it == partitions_.end() ? nullptr : it->second.get();
}

}  // namespace samsa

#include "broker/replica_manager.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>

#include "base/log.h"

namespace samsa {

Status ReplicaManager::apply_image(const MetadataImage& image) {
  std::set<TopicPartition> wanted;
  const bool had_unopened = !unopened_.empty();
  size_t newly_unopened = 0;
  std::optional<std::string> first_failure;  // of those
  for (const auto& [name, topic] : image.topics()) {
    LogConfig config = log_config_(topic);
    for (const PartitionState& p : topic.partitions) {
      if (std::find(p.replicas.begin(), p.replicas.end(), self_) == p.replicas.end()) continue;
      TopicPartition tp{name, p.partition};
      wanted.insert(tp);
      auto it = partitions_.find(tp);
      if (it == partitions_.end()) {
        Result<Log*> log = logs_.create_log(tp, config);
        if (!log.ok()) {
          if (unopened_.insert(tp).second && newly_unopened++ == 0) {
            first_failure = tp.to_string() + ": " + log.error().to_string();
          }
          continue;
        }
        unopened_.erase(tp);
        it = partitions_.emplace(tp, std::make_unique<Partition>(tp, topic.id, **log, self_)).first;
      } else {
        it->second->log().set_config(config);
      }
      it->second->update_state(p.leader, p.leader_epoch, p.isr);
    }
  }
  std::erase_if(unopened_, [&](const TopicPartition& tp) { return !wanted.contains(tp); });
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
  for (auto it = partitions_.begin(); it != partitions_.end();) {
    if (wanted.contains(it->first)) {
      ++it;
      continue;
    }
    TopicPartition tp = it->first;
    it = partitions_.erase(it);
    RETURN_IF_ERROR(logs_.delete_log(tp));
    LOG_INFO("replicas", "deleted log of {}", tp.to_string());
  }
  return ok_status();
}

Partition* ReplicaManager::get(const TopicPartition& tp) {
  auto it = partitions_.find(tp);
  return it == partitions_.end() ? nullptr : it->second.get();
}

}  // namespace samsa

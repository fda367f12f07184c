#include "broker/replica_manager.h"

#include <algorithm>
#include <set>

#include "base/log.h"

namespace samsa {

Status ReplicaManager::apply_image(const MetadataImage& image) {
  std::set<TopicPartition> wanted;
  for (const auto& [name, topic] : image.topics()) {
    LogConfig config = log_config_(topic);
    for (const PartitionState& p : topic.partitions) {
      if (std::find(p.replicas.begin(), p.replicas.end(), self_) == p.replicas.end()) continue;
      TopicPartition tp{name, p.partition};
      wanted.insert(tp);
      auto it = partitions_.find(tp);
      if (it == partitions_.end()) {
        ASSIGN_OR_RETURN(Log * log, logs_.create_log(tp, config));
        it = partitions_.emplace(tp, std::make_unique<Partition>(tp, topic.id, *log, self_)).first;
      } else {
        it->second->log().set_config(config);
      }
      it->second->update_state(p.leader, p.leader_epoch, p.isr);
    }
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

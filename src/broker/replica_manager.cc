#include "broker/replica_manager.h"

#include <algorithm>

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
    it = partitions_.erase(it);  // before its Log goes
  }
  // Logs of those partitions, and any the metadata does not assign here by
  // topic id (left on disk by a crash during a deletion).
  Status removed = logs_.remove_stray_logs(assigned);
  for (const auto& [name, topic] : image.topics()) {
    LogConfig config = log_config_(topic);
    for (const PartitionState& p : topic.partitions) {
      TopicPartition tp{name, p.partition};
      if (!assigned.contains(tp)) continue;
      auto it = partitions_.find(tp);
      if (it == partitions_.end()) {
        ASSIGN_OR_RETURN(Log * log, logs_.create_log(tp, config, topic.id));
        it = partitions_.emplace(tp, std::make_unique<Partition>(tp, topic.id, *log, self_)).first;
      } else {
        it->second->log().set_config(config);
      }
      it->second->update_state(p.leader, p.leader_epoch, p.isr);
    }
  }
  return removed;
}

Partition* ReplicaManager::get(const TopicPartition& tp) {
  auto it = partitions_.find(tp);
  return it == partitions_.end() ? nullptr : it->second.get();
}

}  // namespace samsa

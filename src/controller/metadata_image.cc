#include "controller/metadata_image.h"

#include <algorithm>

#include "base/assert.h"

namespace samsa {

void MetadataImage::apply(const MetadataRecord& record) {
  std::visit([this](const auto& r) { apply_one(r); }, record);
}

void MetadataImage::apply_one(const RegisterBrokerRecord& r) {
  auto it = brokers_.find(r.broker_id);
  // Broker epochs only grow: a new incarnation gets a higher one, the same
  // incarnation keeps its own.
  if (it != brokers_.end()) ASSERT_MSG(r.broker_epoch >= it->second.epoch, "broker epoch went back");
  static const BrokerEndpoint kNone;
  const BrokerEndpoint& first = r.endpoints.empty() ? kNone : r.endpoints.front();
  brokers_[r.broker_id] = BrokerState{r.broker_id, r.broker_epoch,  first.host,  first.port,
                                      r.rack,      r.incarnation_id, r.endpoints, r.fenced,
                                      r.in_controlled_shutdown};
}

BrokerState& MetadataImage::registered(NodeId id, BrokerEpoch epoch, const char* record) {
  auto it = brokers_.find(id);
  ASSERT_MSG(it != brokers_.end() && it->second.epoch == epoch, record);
  return it->second;
}

// Ids only grow: a record that would move them back is ignored (Kafka's
// ProducerIdControlManager.replay refuses it).
void MetadataImage::apply_one(const ProducerIdsRecord& r) {
  if (r.next_producer_id > last_producer_ids_.next_producer_id) last_producer_ids_ = r;
}

void MetadataImage::apply_one(const UnregisterBrokerRecord& r) {
  registered(r.broker_id, r.broker_epoch, "unregister of a broker not registered with that epoch");
  brokers_.erase(r.broker_id);
}

void MetadataImage::apply_one(const FenceBrokerRecord& r) {
  registered(r.broker_id, r.broker_epoch, "fence of a broker not registered with that epoch").fenced = true;
}

void MetadataImage::apply_one(const UnfenceBrokerRecord& r) {
  registered(r.broker_id, r.broker_epoch, "unfence of a broker not registered with that epoch").fenced = false;
}

void MetadataImage::apply_one(const BrokerRegistrationChangeRecord& r) {
  BrokerState& b = registered(r.broker_id, r.broker_epoch, "change of a broker not registered with that epoch");
  using Fencing = BrokerRegistrationChangeRecord::Fencing;
  if (r.fenced == Fencing::kFence) b.fenced = true;
  if (r.fenced == Fencing::kUnfence) b.fenced = false;
  if (r.in_controlled_shutdown) b.in_controlled_shutdown = true;
}

void MetadataImage::apply_one(const TopicRecord& r) {
  ASSERT_MSG(!topics_.contains(r.name), r.name.c_str());
  ASSERT(!topic_names_by_id_.contains(r.topic_id));
  TopicState& t = topics_[r.name];
  t.name = r.name;
  t.id = r.topic_id;
  topic_names_by_id_[r.topic_id] = r.name;
}

namespace {
// KIP-966's invariants of a partition's eligible leaders, as every replayed
// record must leave them (the controller plans them so).
void check_eligible_leaders(const PartitionState& p) {
  auto holds = [](const std::vector<NodeId>& ids, NodeId id) {
    return std::find(ids.begin(), ids.end(), id) != ids.end();
  };
  for (NodeId id : p.elr) {
    ASSERT_MSG(!holds(p.isr, id), "ELR and ISR are disjoint");
    ASSERT_MSG(holds(p.replicas, id), "ELR within the replicas");
  }
}
}  // namespace

void MetadataImage::apply_one(const PartitionRecord& r) {
  TopicState* t = mutable_topic_by_id(r.topic_id);
  ASSERT_MSG(t != nullptr, "partition record for an unknown topic");
  size_t index = size_t(r.partition.value());
  // Partitions are created in order (CreateTopics, CreatePartitions), and a
  // later record for an existing partition replaces its state.
  ASSERT(index <= t->partitions.size());
  PartitionState state{r.partition, r.replicas, r.isr, r.leader, r.leader_epoch, r.partition_epoch, r.elr,
                       r.last_known_elr};
  check_eligible_leaders(state);
  if (index == t->partitions.size()) {
    t->partitions.push_back(std::move(state));
  } else {
    t->partitions[index] = std::move(state);
  }
}

// PartitionRegistration.merge: what the record sets replaces ours; the
// partition epoch moves on every change, the leader epoch when a leader
// (or the lack of one) is named.
void MetadataImage::apply_one(const PartitionChangeRecord& r) {
  TopicState* t = mutable_topic_by_id(r.topic_id);
  ASSERT_MSG(t != nullptr, "partition change record for an unknown topic");
  size_t index = size_t(r.partition.value());
  ASSERT_MSG(index < t->partitions.size(), "partition change record for an unknown partition");
  PartitionState& p = t->partitions[index];
  if (r.replicas) p.replicas = *r.replicas;
  if (r.isr) p.isr = *r.isr;
  if (r.elr) p.elr = *r.elr;
  if (r.last_known_elr) p.last_known_elr = *r.last_known_elr;
  if (r.leader != PartitionChangeRecord::kNoLeaderChange) {
    p.leader = r.leader;
    p.leader_epoch = p.leader_epoch + 1;
  }
  p.partition_epoch += 1;
  check_eligible_leaders(p);
}

void MetadataImage::apply_one(const ConfigRecord& r) {
  std::map<std::string, std::string>* configs = nullptr;
  if (r.resource == ConfigRecord::Resource::kTopic) {
    auto it = topics_.find(r.resource_name);
    ASSERT_MSG(it != topics_.end(), r.resource_name.c_str());
    configs = &it->second.configs;
  } else {
    configs = &broker_configs_[r.resource_name];
  }
  if (r.value) {
    (*configs)[r.key] = *r.value;
  } else {
    configs->erase(r.key);
    if (configs->empty() && r.resource == ConfigRecord::Resource::kBroker) broker_configs_.erase(r.resource_name);
  }
}

void MetadataImage::apply_one(const RemoveTopicRecord& r) {
  auto it = topic_names_by_id_.find(r.topic_id);
  ASSERT_MSG(it != topic_names_by_id_.end(), "remove of an unknown topic");
  topics_.erase(it->second);
  topic_names_by_id_.erase(it);
}

void MetadataImage::apply_one(const ClientQuotaRecord& r) {
  if (!r.remove) {
    client_quotas_[r.entity][r.key] = r.value;
    return;
  }
  auto it = client_quotas_.find(r.entity);
  if (it == client_quotas_.end()) return;
  it->second.erase(r.key);
  if (it->second.empty()) client_quotas_.erase(it);
}

const TopicState* MetadataImage::topic(std::string_view name) const {
  auto it = topics_.find(name);
  return it == topics_.end() ? nullptr : &it->second;
}

const TopicState* MetadataImage::topic_by_id(const Uuid& id) const {
  auto it = topic_names_by_id_.find(id);
  return it == topic_names_by_id_.end() ? nullptr : topic(it->second);
}

TopicState* MetadataImage::mutable_topic_by_id(const Uuid& id) {
  auto it = topic_names_by_id_.find(id);
  if (it == topic_names_by_id_.end()) return nullptr;
  return &topics_.find(it->second)->second;
}

const BrokerState* MetadataImage::broker(NodeId id) const {
  auto it = brokers_.find(id);
  return it == brokers_.end() ? nullptr : &it->second;
}

bool MetadataImage::broker_active(NodeId id) const {
  const BrokerState* b = broker(id);
  return b != nullptr && b->active();
}

const std::map<std::string, std::string>& MetadataImage::broker_configs(const std::string& resource_name) const {
  static const std::map<std::string, std::string> kEmpty;
  auto it = broker_configs_.find(resource_name);
  return it == broker_configs_.end() ? kEmpty : it->second;
}

std::vector<MetadataRecord> MetadataImage::to_records() const {
  std::vector<MetadataRecord> out;
  for (const auto& [id, b] : brokers_) {
    out.push_back(RegisterBrokerRecord{b.id, b.epoch, b.incarnation_id, b.listeners, b.rack, b.fenced,
                                       b.in_controlled_shutdown});
  }
  for (const auto& [name, t] : topics_) {
    out.push_back(TopicRecord{t.name, t.id});
    for (const PartitionState& p : t.partitions) {
      out.push_back(PartitionRecord{t.id, p.partition, p.replicas, p.isr, p.leader, p.leader_epoch, p.partition_epoch,
                                    p.elr, p.last_known_elr});
    }
    for (const auto& [key, value] : t.configs) {
      out.push_back(ConfigRecord{ConfigRecord::Resource::kTopic, t.name, key, value});
    }
  }
  for (const auto& [resource, configs] : broker_configs_) {
    for (const auto& [key, value] : configs) {
      out.push_back(ConfigRecord{ConfigRecord::Resource::kBroker, resource, key, value});
    }
  }
  for (const auto& [entity, quotas] : client_quotas_) {
    for (const auto& [key, value] : quotas) out.push_back(ClientQuotaRecord{entity, key, value, false});
  }
  // A snapshot keeps the ids handed out, so no later block overlaps them.
  if (last_producer_ids_.next_producer_id > ProducerId(0)) out.push_back(last_producer_ids_);
  return out;
}

}  // namespace samsa

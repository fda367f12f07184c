#pragma once
// MetadataImage: the cluster as the metadata log describes it — brokers,
// topics, partition assignments, leaders, ISRs and configs. It changes only
// by apply(record), in log order, so every node that replays the same log
// holds the same image. Owned by one thread (the broker's event loop);
// readers take const references between applies.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "controller/metadata_records.h"

namespace samsa {

struct PartitionState {
  PartitionId partition;
  std::vector<NodeId> replicas;
  std::vector<NodeId> isr;
  NodeId leader = kNoNode;
  LeaderEpoch leader_epoch{0};
  int32_t partition_epoch = 0;
  // Eligible leader replicas (KIP-966): out of the ISR, yet holding every
  // committed record, because they left it while the ISR was below
  // min.insync.replicas (when the HW cannot advance). Disjoint from the ISR.
  std::vector<NodeId> elr;
  std::vector<NodeId> last_known_elr;  // the leader when the ISR became empty (KIP-966 balanced recovery)
};

struct TopicState {
  std::string name;
  Uuid id;
  std::vector<PartitionState> partitions;  // index == partition id
  std::map<std::string, std::string> configs;  // only keys set explicitly
};

// A registered broker (Kafka's BrokerRegistration). host and port are its
// first endpoint's, the one clients are told about.
struct BrokerState {
  NodeId id;
  BrokerEpoch epoch{0};
  std::string host;
  int32_t port = 0;
  std::optional<std::string> rack;
  Uuid incarnation_id;
  std::vector<BrokerEndpoint> listeners;
  bool fenced = false;
  bool in_controlled_shutdown = false;
  // Kafka's isActive: may lead and be in an ISR.
  bool active() const { return !fenced && !in_controlled_shutdown; }
};

class MetadataImage {
 public:
  void apply(const MetadataRecord& record);

  const TopicState* topic(std::string_view name) const;
  const TopicState* topic_by_id(const Uuid& id) const;
  const std::map<std::string, TopicState, std::less<>>& topics() const { return topics_; }
  const std::map<NodeId, BrokerState>& brokers() const { return brokers_; }
  const BrokerState* broker(NodeId id) const;
  // Registered, unfenced and not in controlled shutdown (Kafka's
  // ClusterControlManager.isActive).
  bool broker_active(NodeId id) const;
  // The dynamic configs of a BROKER resource: a broker id ("1") or "", the
  // cluster-wide default. Only keys set explicitly.
  const std::map<std::string, std::string>& broker_configs(const std::string& resource_name) const;
  // Client quotas (AlterClientQuotas): entity -> quota key -> value. An
  // entity whose last key is removed is gone.
  const std::map<ClientQuotaEntity, std::map<std::string, double>>& client_quotas() const { return client_quotas_; }
  // The first producer id not handed out yet (ProducerIdsRecord).
  ProducerId next_producer_id() const { return last_producer_ids_.next_producer_id; }
  // Offset of the last record applied (-1: none); lets a node tell how far
  // it has replayed.
  Offset applied_offset() const { return applied_offset_; }
  void set_applied_offset(Offset offset) { applied_offset_ = offset; }

  // The records that rebuild this image when applied in order to an empty
  // one: the content of a metadata snapshot (KIP-630). Brokers, then each
  // topic with its partitions and configs, then broker configs and quotas.
  std::vector<MetadataRecord> to_records() const;

 private:
  void apply_one(const RegisterBrokerRecord& r);
  void apply_one(const TopicRecord& r);
  void apply_one(const PartitionRecord& r);
  void apply_one(const PartitionChangeRecord& r);
  void apply_one(const ConfigRecord& r);
  void apply_one(const RemoveTopicRecord& r);
  void apply_one(const ClientQuotaRecord& r);
  void apply_one(const UnregisterBrokerRecord& r);
  void apply_one(const FenceBrokerRecord& r);
  void apply_one(const UnfenceBrokerRecord& r);
  void apply_one(const BrokerRegistrationChangeRecord& r);
  void apply_one(const ProducerIdsRecord& r);
  // The registration a broker-state record names: it must exist with that
  // epoch (Kafka's replay refuses anything else).
  BrokerState& registered(NodeId id, BrokerEpoch epoch, const char* record);
  TopicState* mutable_topic_by_id(const Uuid& id);

  std::map<std::string, TopicState, std::less<>> topics_;
  std::map<Uuid, std::string> topic_names_by_id_;
  std::map<NodeId, BrokerState> brokers_;
  std::map<std::string, std::map<std::string, std::string>, std::less<>> broker_configs_;
  std::map<ClientQuotaEntity, std::map<std::string, double>> client_quotas_;
  Offset applied_offset_ = kNoOffset;
  ProducerIdsRecord last_producer_ids_{NodeId(-1), BrokerEpoch(-1), ProducerId(0)};
};

}  // namespace samsa

#pragma once
// The records of the cluster metadata log, after KRaft's (KIP-631): every
// change to brokers, topics, partitions and configs is one record appended
// to `__cluster_metadata`, and the MetadataImage is the result of replaying
// them in order. A single node appends them itself; a quorum replicates the
// same records through raft/.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "model/ids.h"
#include "model/uuid.h"

namespace samsa {

// One listener of a broker as registered (Kafka's BrokerEndpoint):
// security_protocol is Kafka's SecurityProtocol id (0 PLAINTEXT, 1 SSL,
// 2 SASL_PLAINTEXT, 3 SASL_SSL).
struct BrokerEndpoint {
  std::string name;
  std::string host;
  uint16_t port = 0;
  int16_t security_protocol = 0;
  bool operator==(const BrokerEndpoint&) const = default;
};

// A broker (re-)registers: a new incarnation gets a new, higher epoch (the
// offset of its registration, KIP-631); the same incarnation amends its
// registration (listeners, rack) and keeps its epoch and state. The first
// endpoint is the one clients are told about (Metadata, DescribeCluster).
struct RegisterBrokerRecord {
  NodeId broker_id;
  BrokerEpoch broker_epoch{0};
  Uuid incarnation_id;
  std::vector<BrokerEndpoint> endpoints;
  std::optional<std::string> rack;
  bool fenced = true;  // a new registration is fenced until it has caught up
  bool in_controlled_shutdown = false;
};

// The broker leaves the cluster for good (UnregisterBroker).
struct UnregisterBrokerRecord {
  NodeId broker_id;
  BrokerEpoch broker_epoch{0};
};

// Older metadata versions' fence and unfence (Kafka writes them below
// metadata.version 3.3-IV3); replayed, not planned.
struct FenceBrokerRecord {
  NodeId broker_id;
  BrokerEpoch broker_epoch{0};
};
struct UnfenceBrokerRecord {
  NodeId broker_id;
  BrokerEpoch broker_epoch{0};
};

// A change of a registered broker's state, as Kafka's
// BrokerRegistrationChangeRecord: what the controller plans for fencing,
// unfencing and entering controlled shutdown.
struct BrokerRegistrationChangeRecord {
  enum class Fencing : int8_t { kUnfence = -1, kNone = 0, kFence = 1 };  // Kafka's BrokerRegistrationFencingChange
  NodeId broker_id;
  BrokerEpoch broker_epoch{0};
  Fencing fenced = Fencing::kNone;
  bool in_controlled_shutdown = false;  // true: enters it; false: no change (it is left by re-registering)
};

struct TopicRecord {
  std::string name;
  Uuid topic_id;
};

struct PartitionRecord {
  Uuid topic_id;
  PartitionId partition;
  std::vector<NodeId> replicas;
  std::vector<NodeId> isr;
  NodeId leader = kNoNode;
  LeaderEpoch leader_epoch{0};
  int32_t partition_epoch = 0;
  // KIP-966: replicas out of the ISR that still hold every committed record
  // (eligible leaders), and the last known leader (when the ISR emptied).
  std::vector<NodeId> elr;
  std::vector<NodeId> last_known_elr;
};

// A change of one partition (Kafka's PartitionChangeRecord): only what
// changed is set. Applying it bumps the partition epoch, and the leader
// epoch when `leader` is set (even to the same broker), as Kafka's
// PartitionRegistration.merge.
struct PartitionChangeRecord {
  static constexpr NodeId kNoLeaderChange{-2};  // Kafka's NO_LEADER_CHANGE
  Uuid topic_id;
  PartitionId partition;
  std::optional<std::vector<NodeId>> isr;
  NodeId leader = kNoLeaderChange;  // kNoNode: now leaderless
  std::optional<std::vector<NodeId>> replicas;
  // 0 RECOVERED, 1 RECOVERING (KIP-704, set by an unclean election); -1 no change.
  int8_t leader_recovery_state = -1;
  // KIP-966: the new eligible leader replicas / last known ELR; nullopt: unchanged.
  std::optional<std::vector<NodeId>> elr;
  std::optional<std::vector<NodeId>> last_known_elr;
  bool operator==(const PartitionChangeRecord&) const = default;
};

// A resource-level config change. An absent value deletes the key (back to
// the default).
struct ConfigRecord {
  enum class Resource : int8_t { kTopic = 2, kBroker = 4 };  // Kafka's ConfigResource.Type ids
  Resource resource = Resource::kTopic;
  std::string resource_name;
  std::string key;
  std::optional<std::string> value;
};

struct RemoveTopicRecord {
  Uuid topic_id;
};

// A client quota entity, as Kafka's ClientQuotaEntity: entity type ("user",
// "client-id", "ip") -> name, where nullopt is the type's default entity.
using ClientQuotaEntity = std::map<std::string, std::optional<std::string>>;

// Sets (or, remove, deletes) one quota key of one entity, as KRaft's
// ClientQuotaRecord. Validated before it is proposed.
struct ClientQuotaRecord {
  ClientQuotaEntity entity;
  std::string key;
  double value = 0;
  bool remove = false;
};

// The active controller handed producer ids [previous next, next_producer_id)
// to a broker (AllocateProducerIds, KIP-730): committed before the broker
// uses them, so blocks never overlap, also across controller failover.
struct ProducerIdsRecord {
  NodeId broker_id;
  BrokerEpoch broker_epoch{-1};
  ProducerId next_producer_id{0};
};

using MetadataRecord =
    std::variant<RegisterBrokerRecord, TopicRecord, PartitionRecord, ConfigRecord, RemoveTopicRecord,
                 ClientQuotaRecord, UnregisterBrokerRecord, FenceBrokerRecord, UnfenceBrokerRecord,
                 BrokerRegistrationChangeRecord, PartitionChangeRecord, ProducerIdsRecord>;

}  // namespace samsa

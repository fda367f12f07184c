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

struct RegisterBrokerRecord {
  NodeId broker_id;
  int64_t broker_epoch = 0;
  std::string host;
  int32_t port = 0;
  std::optional<std::string> rack;
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

using MetadataRecord = std::variant<RegisterBrokerRecord, TopicRecord, PartitionRecord, ConfigRecord,
                                    RemoveTopicRecord, ClientQuotaRecord>;

}  // namespace samsa

#pragma once
// ClusterMetadata: the cluster as one Metadata answer shows it (v9+ gives
// the offline replicas, v10+ the topic ids): the live brokers, the
// controller id, the cluster id and every topic's partitions. The brokers
// listed are the unfenced ones (Kafka's brokers list alive brokers only);
// a replica on a fenced or unregistered broker is in the partition's
// offline replicas. Read by `samsa cluster describe` and `samsa topic
// describe` through WireClient.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/result.h"
#include "cli/topic_description.h"
#include "cli/wire_client.h"
#include "protocol/generated/metadata.h"

namespace samsa::cli {

struct BrokerEndpoint {
  int32_t id = -1;
  std::string host;
  int32_t port = 0;
  std::optional<std::string> rack;
};

struct TopicError {
  std::string topic;
  int16_t error_code = 0;
};

struct ClusterMetadata {
  std::optional<std::string> cluster_id;
  int32_t controller_id = -1;
  std::vector<BrokerEndpoint> brokers;  // by id
  std::vector<TopicDescription> topics;  // by name; configs not filled in
  std::vector<TopicError> topic_errors;  // topics the answer lists with an error
};

// Pure: the answer's brokers sorted by id and topics by name.
ClusterMetadata to_cluster_metadata(const protocol::MetadataResponse& response);
// Metadata for every topic, at the highest version both sides know.
Result<ClusterMetadata> fetch_cluster_metadata(WireClient& client);

std::set<int32_t> live_broker_ids(const ClusterMetadata& metadata);
const BrokerEndpoint* find_broker(const ClusterMetadata& metadata, int32_t id);

}  // namespace samsa::cli

#include "cli/cluster_metadata.h"

#include <algorithm>

#include "protocol/error_code.h"

namespace samsa::cli {

ClusterMetadata to_cluster_metadata(const protocol::MetadataResponse& response) {
  ClusterMetadata out;
  out.cluster_id = response.cluster_id;
  out.controller_id = response.controller_id;
  for (const auto& b : response.brokers) out.brokers.push_back({b.node_id, b.host, b.port, b.rack});
  std::sort(out.brokers.begin(), out.brokers.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  for (const auto& t : response.topics) {
    std::string name = t.name.value_or("");
    if (t.error_code != 0) {
      out.topic_errors.push_back({name, t.error_code});
      continue;
    }
    TopicDescription desc;
    desc.name = name;
    if (!t.topic_id.is_zero()) desc.topic_id = t.topic_id.to_string();
    for (const auto& p : t.partitions) {
      desc.partitions.push_back({p.partition_index, p.leader_id, p.replica_nodes, p.isr_nodes, p.offline_replicas});
    }
    out.topics.push_back(std::move(desc));
  }
  std::sort(out.topics.begin(), out.topics.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

Result<ClusterMetadata> fetch_cluster_metadata(WireClient& client) {
  protocol::MetadataRequest request;
  request.topics.reset();  // null: every topic (v1+)
  request.allow_auto_topic_creation = false;
  ASSIGN_OR_RETURN(auto answer, client.call<protocol::MetadataResponse>(request));
  if (answer.body.error_code != 0) {
    return Error(ErrorKind::kIo, client.address().to_string() + " answered Metadata with " +
                                     protocol::error_name(answer.body.error_code));
  }
  return to_cluster_metadata(answer.body);
}

std::set<int32_t> live_broker_ids(const ClusterMetadata& metadata) {
  std::set<int32_t> out;
  for (const BrokerEndpoint& b : metadata.brokers) out.insert(b.id);
  return out;
}

const BrokerEndpoint* find_broker(const ClusterMetadata& metadata, int32_t id) {
  for (const BrokerEndpoint& b : metadata.brokers) {
    if (b.id == id) return &b;
  }
  return nullptr;
}

}  // namespace samsa::cli

#include "cli/cluster_description.h"

#include <algorithm>
#include <map>

#include "cli/json_writer.h"

namespace samsa::cli {
namespace {

constexpr const char* kZeroUuid = "AAAAAAAAAAAAAAAAAAAAAA";

std::vector<BrokerRow> broker_rows(const ClusterMetadata& metadata, const std::optional<QuorumStatus>& quorum) {
  std::map<int32_t, BrokerRow> rows;
  for (const BrokerEndpoint& b : metadata.brokers) rows[b.id] = BrokerRow{b.id, b.host, b.port, b.rack, false};
  auto named = [&rows](int32_t id) {
    if (id >= 0 && rows.count(id) == 0) rows[id] = BrokerRow{id, std::nullopt, 0, std::nullopt, true};
  };
  for (const TopicDescription& t : metadata.topics) {
    for (const PartitionDescription& p : t.partitions) {
      for (int32_t id : p.replicas) named(id);
    }
  }
  if (quorum) {
    for (const QuorumReplica& o : quorum->observers) named(o.id);
  }
  std::vector<BrokerRow> out;
  for (auto& [id, row] : rows) out.push_back(std::move(row));
  return out;
}

// {"id": 1, "directoryId": "...", "endpoints": ["CONTROLLER://h:p"]}, as
// MetadataQuorumCommand's Node.toString (the directory id only when known).
std::string replica_state_list(const QuorumStatus& quorum, const std::vector<QuorumReplica>& replicas) {
  std::string out = "[";
  for (size_t i = 0; i < replicas.size(); ++i) {
    const QuorumReplica& r = replicas[i];
    if (i > 0) out += ", ";
    out += "{\"id\": " + std::to_string(r.id);
    if (r.directory_id != kZeroUuid) out += ", \"directoryId\": \"" + r.directory_id + "\"";
    auto it = quorum.endpoints.find(r.id);
    if (it != quorum.endpoints.end() && !it->second.empty()) {
      out += ", \"endpoints\": [";
      for (size_t e = 0; e < it->second.size(); ++e) out += (e ? ", \"" : "\"") + it->second[e] + "\"";
      out += "]";
    }
    out += "}";
  }
  return out + "]";
}

struct ReplicationRow {
  const QuorumReplica* replica;
  const char* status;
};

// Leader first, then the other voters, then the observers (Kafka's order).
std::vector<ReplicationRow> replication_rows(const QuorumStatus& quorum) {
  std::vector<ReplicationRow> rows;
  if (const QuorumReplica* leader = quorum_leader(quorum)) rows.push_back({leader, "Leader"});
  for (const QuorumReplica& v : quorum.voters) {
    if (v.id != quorum.leader_id) rows.push_back({&v, "Follower"});
  }
  for (const QuorumReplica& o : quorum.observers) rows.push_back({&o, "Observer"});
  return rows;
}

int64_t lag_behind_leader(const QuorumStatus& quorum, const QuorumReplica& r) {
  const QuorumReplica* leader = quorum_leader(quorum);
  return leader ? leader->log_end_offset - r.log_end_offset : -1;
}

std::string pad_label(const std::string& label) {
  // Kafka's status lines: the label and colon padded to 24 characters.
  std::string out = label + ":";
  out.resize(std::max<size_t>(24, out.size() + 1), ' ');
  return out;
}

void write_replicas(JsonWriter& w, const QuorumStatus& quorum, const std::vector<QuorumReplica>& replicas,
                    bool voters) {
  w.begin_array();
  for (const QuorumReplica& r : replicas) {
    const char* status = !voters ? "Observer" : r.id == quorum.leader_id ? "Leader" : "Follower";
    w.begin_object();
    w.key("id").value(r.id);
    w.key("directory_id").value(r.directory_id);
    w.key("log_end_offset").value(r.log_end_offset);
    w.key("lag").value(lag_behind_leader(quorum, r));
    w.key("last_fetch_timestamp").value(r.last_fetch_timestamp);
    w.key("last_caught_up_timestamp").value(r.last_caught_up_timestamp);
    w.key("status").value(status);
    w.key("endpoints").begin_array();
    auto it = quorum.endpoints.find(r.id);
    if (it != quorum.endpoints.end()) {
      for (const std::string& e : it->second) w.value(e);
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
}

void write_quorum(JsonWriter& w, const QuorumStatus& quorum) {
  w.begin_object();
  w.key("leader_id").value(quorum.leader_id);
  w.key("leader_epoch").value(quorum.leader_epoch);
  w.key("high_watermark").value(quorum.high_watermark);
  w.key("max_follower_lag").value(max_follower_lag(quorum));
  w.key("max_follower_lag_time_ms").value(max_follower_lag_time_ms(quorum));
  w.key("voters");
  write_replicas(w, quorum, quorum.voters, true);
  w.key("observers");
  write_replicas(w, quorum, quorum.observers, false);
  w.key("answered_by").value(quorum.answered_by);
  w.end_object();
}

}  // namespace

ClusterDescription describe_cluster(const ClusterMetadata& metadata, std::optional<QuorumStatus> quorum,
                                    std::string quorum_error) {
  ClusterDescription out;
  out.cluster_id = metadata.cluster_id;
  out.metadata_controller_id = metadata.controller_id;
  out.brokers = broker_rows(metadata, quorum);
  for (const TopicDescription& t : metadata.topics) {
    for (const PartitionDescription& p : t.partitions) {
      ++out.partitions;
      if (is_under_replicated(p)) ++out.under_replicated_partitions;
      if (!has_leader(p)) ++out.offline_partitions;
    }
  }
  out.quorum = std::move(quorum);
  out.quorum_error = std::move(quorum_error);
  return out;
}

int32_t active_controller(const ClusterDescription& cluster) {
  return cluster.quorum ? cluster.quorum->leader_id : cluster.metadata_controller_id;
}

std::string format_table(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const std::string& h : headers) widths.push_back(h.size());
  for (const auto& row : rows) {
    for (size_t i = 0; i < widths.size() && i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  auto line = [&widths](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t i = 0; i < widths.size(); ++i) {
      std::string cell = i < cells.size() ? cells[i] : "";
      cell.resize(std::max(cell.size(), widths[i]), ' ');
      out += cell + '\t';
    }
    return out + '\n';
  };
  std::string out = line(headers);
  for (const auto& row : rows) out += line(row);
  return out;
}

std::string format_quorum_status(const QuorumStatus& quorum, const std::optional<std::string>& cluster_id) {
  std::string out;
  out += pad_label("ClusterId") + cluster_id.value_or("") + "\n";
  out += pad_label("LeaderId") + std::to_string(quorum.leader_id) + "\n";
  out += pad_label("LeaderEpoch") + std::to_string(quorum.leader_epoch) + "\n";
  out += pad_label("HighWatermark") + std::to_string(quorum.high_watermark) + "\n";
  out += pad_label("MaxFollowerLag") + std::to_string(max_follower_lag(quorum)) + "\n";
  out += pad_label("MaxFollowerLagTimeMs") + std::to_string(max_follower_lag_time_ms(quorum)) + "\n";
  out += pad_label("CurrentVoters") + replica_state_list(quorum, quorum.voters) + "\n";
  out += pad_label("CurrentObservers") + replica_state_list(quorum, quorum.observers) + "\n";
  return out;
}

std::string format_quorum_replication(const QuorumStatus& quorum) {
  std::vector<std::vector<std::string>> rows;
  for (const ReplicationRow& row : replication_rows(quorum)) {
    const QuorumReplica& r = *row.replica;
    rows.push_back({std::to_string(r.id), r.directory_id, std::to_string(r.log_end_offset),
                    std::to_string(lag_behind_leader(quorum, r)), std::to_string(r.last_fetch_timestamp),
                    std::to_string(r.last_caught_up_timestamp), row.status});
  }
  return format_table({"NodeId", "DirectoryId", "LogEndOffset", "Lag", "LastFetchTimestamp",
                       "LastCaughtUpTimestamp", "Status"},
                      rows);
}

std::string format_cluster_text(const ClusterDescription& cluster) {
  int64_t fenced = std::count_if(cluster.brokers.begin(), cluster.brokers.end(), [](auto& b) { return b.fenced; });
  std::string out;
  out += pad_label("ClusterId") + cluster.cluster_id.value_or("") + "\n";
  out += pad_label("ActiveController") + std::to_string(active_controller(cluster)) +
         (cluster.quorum ? "" : " (Metadata's ControllerId: the quorum is unavailable)") + "\n";
  out += pad_label("Brokers") + std::to_string(int64_t(cluster.brokers.size()) - fenced) + " unfenced, " +
         std::to_string(fenced) + " fenced\n";
  out += pad_label("Partitions") + std::to_string(cluster.partitions) + "\n";
  out += pad_label("UnderReplicatedPartitions") + std::to_string(cluster.under_replicated_partitions) + "\n";
  out += pad_label("OfflinePartitions") + std::to_string(cluster.offline_partitions) + "\n\n";
  std::vector<std::vector<std::string>> rows;
  for (const BrokerRow& b : cluster.brokers) {
    rows.push_back({std::to_string(b.id), b.host ? *b.host + ":" + std::to_string(b.port) : "-",
                    b.rack.value_or("-"), b.fenced ? "fenced" : "unfenced"});
  }
  out += format_table({"BrokerId", "Host:Port", "Rack", "Status"}, rows);
  out += "\nMetadata quorum";
  if (!cluster.quorum) return out + ": unavailable: " + cluster.quorum_error + "\n";
  out += " (answered by " + cluster.quorum->answered_by + ")\n";
  out += format_quorum_status(*cluster.quorum, cluster.cluster_id);
  out += "\n" + format_quorum_replication(*cluster.quorum);
  return out;
}

std::string format_cluster_json(const ClusterDescription& cluster) {
  JsonWriter w;
  w.begin_object();
  w.key("cluster_id").value(cluster.cluster_id);
  w.key("active_controller").value(active_controller(cluster));
  w.key("metadata_controller_id").value(cluster.metadata_controller_id);
  w.key("brokers").begin_array();
  for (const BrokerRow& b : cluster.brokers) {
    w.begin_object();
    w.key("id").value(b.id);
    w.key("host").value(b.host);
    w.key("port");
    if (b.host) {
      w.value(b.port);
    } else {
      w.null();
    }
    w.key("rack").value(b.rack);
    w.key("fenced").value(b.fenced);
    w.end_object();
  }
  w.end_array();
  w.key("partitions").value(cluster.partitions);
  w.key("under_replicated_partitions").value(cluster.under_replicated_partitions);
  w.key("offline_partitions").value(cluster.offline_partitions);
  w.key("quorum");
  if (cluster.quorum) {
    write_quorum(w, *cluster.quorum);
  } else {
    w.null();
  }
  w.key("quorum_error");
  if (cluster.quorum) {
    w.null();
  } else {
    w.value(cluster.quorum_error);
  }
  w.end_object();
  return w.str() + "\n";
}

}  // namespace samsa::cli

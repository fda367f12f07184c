#pragma once
// ClusterDescription: what `samsa cluster describe` shows, and its two
// forms: a text report for people and one JSON object for scripts.
//
// The text report has three parts:
//   - the cluster: its id, the active controller, the brokers (id,
//     host:port, rack, fenced or not) and the partition health counts;
//   - the metadata quorum in the lines of `kafka-metadata-quorum.sh describe
//     --status` (ClusterId, LeaderId, LeaderEpoch, HighWatermark,
//     MaxFollowerLag, MaxFollowerLagTimeMs, CurrentVoters, CurrentObservers);
//   - the table of `kafka-metadata-quorum.sh describe --replication`
//     (NodeId, DirectoryId, LogEndOffset, Lag, LastFetchTimestamp,
//     LastCaughtUpTimestamp, Status), cells padded and tab-ended as Kafka's
//     ToolsUtils.prettyPrintTable prints them.
//
// Brokers: Metadata lists the unfenced ones; a broker id that a partition's
// replicas or the quorum's observers name but Metadata does not list is
// shown fenced (fenced, shut down or unregistered: the cluster does not
// count it as live). Pure: no I/O.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/cluster_metadata.h"
#include "cli/quorum_status.h"

namespace samsa::cli {

struct BrokerRow {
  int32_t id = -1;
  std::optional<std::string> host;  // unknown for a broker Metadata does not list
  int32_t port = 0;
  std::optional<std::string> rack;
  bool fenced = false;
};

struct ClusterDescription {
  std::optional<std::string> cluster_id;
  int32_t metadata_controller_id = -1;  // Metadata's ControllerId
  std::vector<BrokerRow> brokers;       // by id
  int64_t partitions = 0;
  int64_t under_replicated_partitions = 0;  // in-sync replicas fewer than replicas
  int64_t offline_partitions = 0;           // no leader
  std::optional<QuorumStatus> quorum;
  std::string quorum_error;  // why `quorum` is missing
};

ClusterDescription describe_cluster(const ClusterMetadata& metadata, std::optional<QuorumStatus> quorum,
                                    std::string quorum_error);

// The active controller: the quorum leader when the quorum is known, else
// Metadata's ControllerId.
int32_t active_controller(const ClusterDescription& cluster);

// Kafka's table layout: each cell padded to its column's width, then a tab.
std::string format_table(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows);
std::string format_quorum_status(const QuorumStatus& quorum, const std::optional<std::string>& cluster_id);
std::string format_quorum_replication(const QuorumStatus& quorum);

std::string format_cluster_text(const ClusterDescription& cluster);
std::string format_cluster_json(const ClusterDescription& cluster);

}  // namespace samsa::cli

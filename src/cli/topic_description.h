#pragma once
// TopicDescription: what `samsa topic describe` shows about one topic, and
// its text form, the same lines kafka-topics.sh --describe prints so that
// operators' scripts and habits carry over:
//
//   Topic: t\tTopicId: ID\tPartitionCount: 2\tReplicationFactor: 1\tConfigs: k=v,k2=v2
//   \tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1
//
// TopicId is left out when unknown (as kafka-topics.sh does for a zero id);
// a partition without a leader shows "Leader: none". A partition with
// offline replicas (Metadata v5+: replicas on brokers that are fenced or
// gone) ends with "\tOffline: a,b"; kafka-topics.sh has no such field, so a
// healthy partition's line stays exactly Kafka's.
//
// The replication reports (kafka-topics.sh's --under-replicated-partitions,
// --under-min-isr-partitions, --at-min-isr-partitions,
// --unavailable-partitions) print only the partition lines that match any
// of the reports asked for, without the topic line, as TopicCommand does.
// Pure: no I/O.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace samsa::cli {

struct PartitionDescription {
  int32_t partition = 0;
  int32_t leader = -1;
  std::vector<int32_t> replicas;
  std::vector<int32_t> isr;
  std::vector<int32_t> offline;
};

struct TopicDescription {
  std::string name;
  std::optional<std::string> topic_id;
  std::vector<PartitionDescription> partitions;  // any order; printed by id
  std::vector<std::pair<std::string, std::string>> configs;  // non-default only
  // The topic's effective min.insync.replicas (DescribeConfigs), when known.
  std::optional<int32_t> min_insync_replicas;
};

// TopicCommand.PartitionDescription's predicates.
bool has_leader(const PartitionDescription& p);
// Fewer in-sync replicas than replicas.
bool is_under_replicated(const PartitionDescription& p);
// No leader, or fewer in-sync replicas than min.insync.replicas.
bool is_under_min_isr(const PartitionDescription& p, int32_t min_insync_replicas);
bool is_at_min_isr(const PartitionDescription& p, int32_t min_insync_replicas);
// No leader, or a leader that is not among the live brokers.
bool is_unavailable(const PartitionDescription& p, const std::set<int32_t>& live_brokers);

struct ReplicationReports {
  bool under_replicated = false;
  bool under_min_isr = false;
  bool at_min_isr = false;
  bool unavailable = false;

  bool any() const { return under_replicated || under_min_isr || at_min_isr || unavailable; }
  // Whether any report asked for needs min.insync.replicas.
  bool needs_min_isr() const { return under_min_isr || at_min_isr; }
};

// The whole description: the topic line and every partition line.
std::string format_topic_description(const TopicDescription& topic);
// The partition lines that match any of `reports` (which must ask for one).
// `live_brokers` serves --unavailable-partitions; min.insync.replicas comes
// from the topic and must be known when reports.needs_min_isr().
std::string format_partition_reports(const TopicDescription& topic, const ReplicationReports& reports,
                                     const std::set<int32_t>& live_brokers);

}  // namespace samsa::cli

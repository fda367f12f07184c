#include "broker/api_registry.h"

#include "broker/handlers/handlers.h"

namespace samsa {
namespace {

using protocol::ApiKey;

// Versions: every version the supported clients send (docs/compatibility.md),
// so from 0 even where Kafka 4.0 (KIP-896) dropped old versions; the
// maximums are Kafka 4.1's where we implement the fields they add
// (docs/compatibility.md, "Versions beside Kafka 4.x").
constexpr ApiRoute kRoutes[] = {
    {ApiKey::kProduce, 0, 13, handle_produce},
    {ApiKey::kFetch, 0, 18, handle_fetch},
    {ApiKey::kListOffsets, 0, 10, handle_list_offsets},
    {ApiKey::kMetadata, 0, 13, handle_metadata},
    {ApiKey::kOffsetCommit, 0, 9, handle_offset_commit},
    {ApiKey::kOffsetFetch, 0, 9, handle_offset_fetch},
    {ApiKey::kFindCoordinator, 0, 6, handle_find_coordinator},
    {ApiKey::kJoinGroup, 0, 9, handle_join_group},
    {ApiKey::kHeartbeat, 0, 4, handle_heartbeat},
    {ApiKey::kLeaveGroup, 0, 5, handle_leave_group},
    {ApiKey::kSyncGroup, 0, 5, handle_sync_group},
    {ApiKey::kDescribeGroups, 0, 5, handle_describe_groups},
    {ApiKey::kListGroups, 0, 5, handle_list_groups},
    {ApiKey::kApiVersions, 0, 4, handle_api_versions},
    {ApiKey::kCreateTopics, 0, 7, handle_create_topics},
    {ApiKey::kDeleteTopics, 0, 6, handle_delete_topics},
    {ApiKey::kOffsetForLeaderEpoch, 0, 4, handle_offset_for_leader_epoch},
    {ApiKey::kDeleteRecords, 0, 2, handle_delete_records},
    {ApiKey::kInitProducerId, 0, 5, handle_init_producer_id},  // idempotent producers only
    {ApiKey::kDescribeConfigs, 0, 4, handle_describe_configs},
    {ApiKey::kAlterConfigs, 0, 2, handle_alter_configs},
    {ApiKey::kDescribeLogDirs, 1, 4, handle_describe_log_dirs},  // v0 removed in Kafka 4.0 (KIP-896)
    {ApiKey::kCreatePartitions, 0, 3, handle_create_partitions},
    {ApiKey::kDeleteGroups, 0, 2, handle_delete_groups},
    {ApiKey::kElectLeaders, 0, 2, handle_elect_leaders},
    {ApiKey::kIncrementalAlterConfigs, 0, 1, handle_incremental_alter_configs},
    {ApiKey::kOffsetDelete, 0, 0, handle_offset_delete},
    {ApiKey::kDescribeClientQuotas, 0, 1, handle_describe_client_quotas},  // stored, not enforced
    {ApiKey::kAlterClientQuotas, 0, 1, handle_alter_client_quotas},
    {ApiKey::kDescribeQuorum, 0, 2, handle_describe_quorum, true},  // Kafka 3.9's versions
    {ApiKey::kDescribeCluster, 0, 1, handle_describe_cluster},
    {ApiKey::kDescribeProducers, 0, 0, handle_describe_producers},
    {ApiKey::kWriteTxnMarkers, 0, 1, handle_write_txn_markers},  // the partition side of transactions
    {ApiKey::kUnregisterBroker, 0, 0, handle_unregister_broker, false, true},
    {ApiKey::kAllocateProducerIds, 0, 0, handle_allocate_producer_ids, false, true},
    {ApiKey::kDescribeTopicPartitions, 0, 0, handle_describe_topic_partitions},
};

}  // namespace

std::span<const ApiRoute> api_routes() { return kRoutes; }

const ApiRoute* find_route(int16_t api_key, bool controller_role, bool cluster) {
  for (const ApiRoute& r : kRoutes) {
    if (int16_t(r.key) != api_key) continue;
    return (r.controller_role && !controller_role) || (r.cluster_only && !cluster) ? nullptr : &r;
  }
  return nullptr;
}

}  // namespace samsa

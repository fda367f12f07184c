#pragma once
// The request handlers, one file each under handlers/. Each decodes its
// request, acts through the Broker's services, and responds.

namespace samsa {

class Broker;
class Request;

void handle_api_versions(Broker& broker, Request& request);
void handle_metadata(Broker& broker, Request& request);
void handle_produce(Broker& broker, Request& request);
void handle_fetch(Broker& broker, Request& request);
void handle_offset_for_leader_epoch(Broker& broker, Request& request);
void handle_offset_for_leader_epoch(Broker& broker, Request& request);
void handle_list_offsets(Broker& broker, Request& request);
// Consumer groups (issue 4).
void handle_offset_commit(Broker& broker, Request& request);
void handle_offset_fetch(Broker& broker, Request& request);
void handle_find_coordinator(Broker& broker, Request& request);
void handle_join_group(Broker& broker, Request& request);
void handle_heartbeat(Broker& broker, Request& request);
void handle_leave_group(Broker& broker, Request& request);
void handle_sync_group(Broker& broker, Request& request);
void handle_describe_groups(Broker& broker, Request& request);
void handle_list_groups(Broker& broker, Request& request);
void handle_delete_groups(Broker& broker, Request& request);
void handle_offset_delete(Broker& broker, Request& request);
// Admin APIs.
void handle_create_topics(Broker& broker, Request& request);
void handle_describe_quorum(Broker& broker, Request& request);
void handle_delete_topics(Broker& broker, Request& request);
void handle_delete_records(Broker& broker, Request& request);
void handle_describe_configs(Broker& broker, Request& request);
void handle_alter_configs(Broker& broker, Request& request);
void handle_create_partitions(Broker& broker, Request& request);
void handle_elect_leaders(Broker& broker, Request& request);
void handle_incremental_alter_configs(Broker& broker, Request& request);
void handle_describe_cluster(Broker& broker, Request& request);
void handle_describe_log_dirs(Broker& broker, Request& request);
void handle_describe_topic_partitions(Broker& broker, Request& request);
void handle_unregister_broker(Broker& broker, Request& request);
// Idempotent producers.
void handle_init_producer_id(Broker& broker, Request& request);
void handle_allocate_producer_ids(Broker& broker, Request& request);
void handle_describe_producers(Broker& broker, Request& request);
void handle_write_txn_markers(Broker& broker, Request& request);
void handle_describe_client_quotas(Broker& broker, Request& request);
void handle_alter_client_quotas(Broker& broker, Request& request);

}  // namespace samsa

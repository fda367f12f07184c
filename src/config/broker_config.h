#pragma once
// BrokerConfig: the broker's configuration, from Kafka's server.properties
// keys (docs/configuration.md lists every key, its default and where Samsa
// differs from Kafka).
//
// from_properties() parses and cross-checks the keys (ConfigDef handles
// types and ranges; this adds the rules that involve several keys: listener
// names and ports, advertised listeners, process.roles, the
// ms/minutes/hours families). The typed fields below are the ones the
// server and broker read often; every key, with its source for
// DescribeConfigs, is in values(). Immutable after construction except for
// set_bound_port(), which run_server calls once listeners are bound.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/config_def.h"
#include "base/result.h"
#include "io/endpoint.h"
#include "model/ids.h"

namespace samsa {

// replica.selector.class values (Kafka's class names).
inline constexpr const char* kLeaderSelector = "org.apache.kafka.common.replica.LeaderSelector";
inline constexpr const char* kRackAwareReplicaSelector = "org.apache.kafka.common.replica.RackAwareReplicaSelector";

struct ListenerConfig {
  Endpoint endpoint;              // name, host, port (port 0 = ephemeral)
  std::string security_protocol;  // from listener.security.protocol.map
};

// One entry of controller.quorum.voters: id@host:port.
struct QuorumVoter {
  NodeId id;
  std::string host;
  uint16_t port = 0;

  std::string to_string() const { return std::to_string(id.value()) + "@" + host + ":" + std::to_string(port); }
};

// One entry of controller.quorum.bootstrap.servers: host:port.
struct QuorumBootstrapServer {
  std::string host;
  uint16_t port = 0;
};

struct BrokerConfig {
  static const ConfigDef& definition();
  static Result<BrokerConfig> from_properties(const std::map<std::string, std::string>& props);
  // What `samsa server` starts from when given no config file, as Kafka's
  // quickstart server.properties does: the internal topics' replication
  // factors at 1 (Kafka's defaults are 3, and 2 for the transaction log's
  // min ISR), so that one broker alone serves consumer groups.
  // docs/decisions/0014-single-node-internal-topic-defaults.md.
  static std::map<std::string, std::string> single_node_defaults();

  const ConfigValues& values() const { return values_; }
  // Keys given that no definition knows (the caller warns, like Kafka).
  const std::vector<std::string>& unknown_keys() const { return values_.unknown_keys(); }

  // After binding a port-0 listener, records the real port in listeners and
  // in advertised listeners that share that listener's name and port 0.
  void set_bound_port(const std::string& listener_name, uint16_t port);

  bool is_broker() const;
  bool is_controller() const;
  // SAMSA: a node with both roles and neither controller.quorum.voters nor
  // controller.quorum.bootstrap.servers is a one-node cluster, its own only
  // voter, and needs no controller listener (Kafka refuses such a config:
  // one of the two quorum keys is required). This is the default, so that
  // `samsa server` with no config runs a complete cluster.
  bool is_implicit_single_node() const;
  const ListenerConfig* find_listener(const std::string& name) const;

  NodeId node_id{1};
  std::vector<std::string> process_roles;  // "broker", "controller"
  std::optional<std::string> cluster_id;
  std::vector<ListenerConfig> listeners;
  std::vector<ListenerConfig> advertised_listeners;  // the broker's: without controller listeners
  // Kafka's effectiveAdvertisedControllerListeners: per controller listener
  // name, its advertised.listeners entry, else its listeners entry (with
  // 0.0.0.0 as an empty host). What this node tells others to reach its
  // controller at (KIP-853).
  std::vector<ListenerConfig> advertised_controller_listeners;
  std::vector<std::string> controller_listener_names;
  std::string inter_broker_listener_name;
  std::vector<QuorumVoter> controller_quorum_voters;
  std::vector<QuorumBootstrapServer> controller_quorum_bootstrap_servers;
  std::optional<std::string> broker_rack;
  // replica.selector.class is Kafka's RackAwareReplicaSelector: as leader,
  // send a consumer with client.rack to a replica on its rack (KIP-392);
  // as follower, serve such consumers up to this replica's high watermark.
  bool rack_aware_replica_selector = false;
  // Broker lifecycle (KIP-631): heartbeats to the active controller, and
  // how long the controller waits for one before fencing the broker.
  int32_t broker_heartbeat_interval_ms = 2000;  // broker.heartbeat.interval.ms
  int32_t broker_session_timeout_ms = 9000;     // broker.session.timeout.ms

  std::vector<std::string> log_dirs;  // log.dirs, else log.dir
  std::string metadata_log_dir;       // metadata.log.dir, else log_dirs[0]

  int32_t num_partitions = 1;
  int16_t default_replication_factor = 1;
  bool auto_create_topics_enable = true;
  bool delete_topic_enable = true;

  int32_t log_segment_bytes = 1073741824;
  int64_t log_roll_ms = 604800000;       // log.roll.ms, else log.roll.hours
  int64_t log_retention_ms = 604800000;  // -1 = unlimited; from ms, minutes or hours
  int64_t log_retention_bytes = -1;
  int64_t log_retention_check_interval_ms = 300000;
  int64_t log_flush_interval_messages = INT64_MAX;
  std::optional<int64_t> log_flush_interval_ms;  // null = never by time
  int32_t log_index_interval_bytes = 4096;
  int32_t log_index_size_max_bytes = 10485760;
  std::vector<std::string> log_cleanup_policy{"delete"};
  std::string compression_type = "producer";
  int32_t message_max_bytes = 1048588;
  int32_t produce_request_decompressed_max_bytes = 64 << 20;  // SAMSA extension
  int32_t min_insync_replicas = 1;

  int32_t socket_request_max_bytes = 104857600;
  int32_t queued_max_requests = 500;
  int32_t max_connections = INT32_MAX;
  int32_t socket_send_buffer_bytes = -1;
  int32_t socket_receive_buffer_bytes = -1;

  int32_t offsets_topic_num_partitions = 50;
  int16_t offsets_topic_replication_factor = 3;
  int64_t offsets_retention_ms = 604800000;  // offsets.retention.minutes
  int32_t group_initial_rebalance_delay_ms = 3000;
  int32_t group_min_session_timeout_ms = 6000;
  int32_t group_max_session_timeout_ms = 1800000;
  int32_t group_max_size = INT32_MAX;

 private:
  ConfigValues values_;
};

}  // namespace samsa

#include "config/broker_config.h"

#include "config/kraft_rules.h"
#include "io/host_files.h"

#include <algorithm>
#include <charconv>
#include <set>

namespace samsa {
namespace {

Error config_error(const std::string& message) { return Error(ErrorKind::kInvalidArgument, message); }

Result<std::map<std::string, std::string>> protocol_map(const ConfigValues& v) {
  std::map<std::string, std::string> out;
  for (const auto& item : v.get_list("listener.security.protocol.map")) {
    size_t colon = item.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == item.size()) {
      return config_error("Invalid value " + item + " for configuration listener.security.protocol.map: " +
                          "entries must be NAME:PROTOCOL");
    }
    std::string name = item.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(), ::toupper);
    out[name] = item.substr(colon + 1);
  }
  return out;
}

Result<std::vector<ListenerConfig>> parse_listeners(const std::string& key, const std::vector<std::string>& items,
                                                    const std::map<std::string, std::string>& protocols) {
  std::vector<ListenerConfig> out;
  std::set<std::string> names;
  for (const auto& item : items) {
    auto ep = parse_endpoint(item);
    if (!ep.ok()) return config_error("Invalid value " + item + " for configuration " + key + ": " +
                                      ep.error().message());
    auto proto = protocols.find(ep->name);
    if (proto == protocols.end()) {
      return config_error("Listener " + ep->name + " in " + key +
                          " has no security protocol in listener.security.protocol.map");
    }
    if (!names.insert(ep->name).second) {
      return config_error("Each listener must have a different name; " + key + " repeats " + ep->name);
    }
    out.push_back(ListenerConfig{std::move(ep).value(), proto->second});
  }
  return out;
}

Status check_ports_unique(const std::vector<ListenerConfig>& listeners) {
  std::set<uint16_t> ports;
  for (const auto& l : listeners) {
    if (l.endpoint.port != 0 && !ports.insert(l.endpoint.port).second) {
      return config_error("Each listener must have a different port; listeners repeats port " +
                          std::to_string(l.endpoint.port));
    }
  }
  return ok_status();
}

// id@host:port, the id a non-negative integer (Kafka's QuorumConfig).
Result<QuorumVoter> parse_voter(const std::string& item) {
  QuorumVoter voter;
  const size_t at = item.find('@');
  int32_t id = -1;
  const char* id_end = item.data() + (at == std::string::npos ? 0 : at);
  auto [end, ec] = std::from_chars(item.data(), id_end, id);
  if (at == std::string::npos || ec != std::errc() || end != id_end || id < 0 ||
      !parse_host_port(std::string_view(item).substr(at + 1), &voter.host, &voter.port).ok()) {
    return config_error("Invalid value " + item + " for configuration controller.quorum.voters: expected id@host:port");
  }
  voter.id = NodeId(id);
  return voter;
}

// ms if set, else minutes, else hours (Kafka's precedence). -1 stays -1.
int64_t pick_ms(const ConfigValues& v, const char* ms, const char* minutes, const char* hours) {
  if (auto x = v.get_optional_long(ms)) return *x;
  if (minutes != nullptr) {
    if (auto m = v.get_optional_int(minutes)) return *m < 0 ? -1 : int64_t(*m) * 60'000;
  }
  int32_t h = v.get_int(hours);
  return h < 0 ? -1 : int64_t(h) * 3'600'000;
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string upper(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), ::toupper);
  return name;
}

// Kafka advertises the canonical host name for "all interfaces".
ListenerConfig advertised_from_listener(ListenerConfig l) {
  if (l.endpoint.host.empty() || l.endpoint.host == "0.0.0.0" || l.endpoint.host == "::") {
    l.endpoint.host = local_host_name();
  }
  return l;
}

// advertised.listeners split as Kafka 4 does: entries naming a controller
// listener advertise the controller (KIP-853), the others the broker. When
// unset: the listeners, minus the controller ones for the broker.
Status resolve_advertised(BrokerConfig& c, const ConfigValues& v, const std::map<std::string, std::string>& protocols) {
  std::vector<ListenerConfig> given;
  if (!v.is_null("advertised.listeners")) {
    ASSIGN_OR_RETURN(given, parse_listeners("advertised.listeners", v.get_list("advertised.listeners"), protocols));
  }
  for (const auto& a : given) {
    if (a.endpoint.host == "0.0.0.0" || a.endpoint.host == "::") {
      return config_error("advertised.listeners cannot use the nonroutable meta-address " + a.endpoint.host +
                          ". Use a routable IP address.");
    }
    (contains(c.controller_listener_names, a.endpoint.name) ? c.advertised_controller_listeners
                                                            : c.advertised_listeners)
        .push_back(a);
  }
  if (v.is_null("advertised.listeners")) {
    for (const auto& l : c.listeners) {
      if (contains(c.controller_listener_names, l.endpoint.name)) continue;
      c.advertised_listeners.push_back(advertised_from_listener(l));
    }
  }
  // A controller listener not advertised explicitly is advertised as bound
  // ("0.0.0.0" becomes an empty host: whoever formats a voter set picks
  // localhost, as kafka-storage --standalone does).
  for (const auto& name : c.controller_listener_names) {
    auto advertised = std::find_if(c.advertised_controller_listeners.begin(), c.advertised_controller_listeners.end(),
                                   [&](const ListenerConfig& a) { return a.endpoint.name == name; });
    const ListenerConfig* bound = c.find_listener(name);
    if (advertised != c.advertised_controller_listeners.end() || bound == nullptr) continue;
    ListenerConfig a = *bound;
    if (a.endpoint.host == "0.0.0.0" || a.endpoint.host == "::") a.endpoint.host.clear();
    c.advertised_controller_listeners.push_back(a);
  }
  return ok_status();
}

// host:port entries of controller.quorum.bootstrap.servers.
Result<std::vector<QuorumBootstrapServer>> parse_bootstrap_servers(const std::vector<std::string>& items) {
  std::vector<QuorumBootstrapServer> out;
  for (const auto& item : items) {
    QuorumBootstrapServer server;
    if (!parse_host_port(item, &server.host, &server.port).ok() || server.port == 0) {
      return config_error("Invalid value " + item +
                          " for configuration controller.quorum.bootstrap.servers: expected host:port");
    }
    out.push_back(std::move(server));
  }
  return out;
}

Status resolve_network(BrokerConfig& c, const ConfigValues& v) {
  ASSIGN_OR_RETURN(auto protocols, protocol_map(v));
  ASSIGN_OR_RETURN(c.listeners, parse_listeners("listeners", v.get_list("listeners"), protocols));
  if (c.listeners.empty()) return config_error("listeners must name at least one listener");
  RETURN_IF_ERROR(check_ports_unique(c.listeners));
  for (const auto& l : c.listeners) {
    if (l.security_protocol != "PLAINTEXT") {
      return config_error("Listener " + l.endpoint.name + " uses security protocol " + l.security_protocol +
                          ", which Samsa does not support yet (only PLAINTEXT)");
    }
  }
  for (const auto& name : v.get_list("controller.listener.names")) c.controller_listener_names.push_back(upper(name));
  RETURN_IF_ERROR(resolve_advertised(c, v, protocols));
  if (!v.is_null("inter.broker.listener.name")) {
    c.inter_broker_listener_name = upper(v.get_string("inter.broker.listener.name"));
  } else if (!c.advertised_listeners.empty()) {
    c.inter_broker_listener_name = c.advertised_listeners.front().endpoint.name;
  }
  for (const auto& item : v.get_list("controller.quorum.voters")) {
    ASSIGN_OR_RETURN(QuorumVoter voter, parse_voter(item));
    c.controller_quorum_voters.push_back(std::move(voter));
  }
  ASSIGN_OR_RETURN(c.controller_quorum_bootstrap_servers,
                   parse_bootstrap_servers(v.get_list("controller.quorum.bootstrap.servers")));
  if (!v.is_null("broker.rack")) c.broker_rack = v.get_string("broker.rack");
  c.rack_aware_replica_selector =
      !v.is_null("replica.selector.class") && v.get_string("replica.selector.class") == kRackAwareReplicaSelector;
  c.broker_heartbeat_interval_ms = v.get_int("broker.heartbeat.interval.ms");
  c.broker_session_timeout_ms = v.get_int("broker.session.timeout.ms");
  return validate_kraft_roles(c, v, protocols);
}

Status resolve_identity(BrokerConfig& c, const ConfigValues& v) {
  int32_t node_id = v.get_int("node.id");
  int32_t broker_id = v.get_int("broker.id");
  if (broker_id >= 0) {
    if (v.is_default("node.id")) {
      node_id = broker_id;
    } else if (broker_id != node_id) {
      return config_error("broker.id " + std::to_string(broker_id) + " and node.id " + std::to_string(node_id) +
                          " differ; set only node.id");
    }
  }
  c.node_id = NodeId(node_id);
  c.process_roles = v.get_list("process.roles");
  if (c.process_roles.empty()) return config_error("process.roles must contain broker, controller or both");
  if (!v.is_null("cluster.id")) c.cluster_id = v.get_string("cluster.id");
  return ok_status();
}

void resolve_storage(BrokerConfig& c, const ConfigValues& v) {
  c.log_dirs = v.is_null("log.dirs") ? std::vector<std::string>{v.get_string("log.dir")} : v.get_list("log.dirs");
  c.metadata_log_dir = v.is_null("metadata.log.dir") ? c.log_dirs.front() : v.get_string("metadata.log.dir");
  c.num_partitions = v.get_int("num.partitions");
  c.default_replication_factor = int16_t(v.get_int("default.replication.factor"));
  c.auto_create_topics_enable = v.get_bool("auto.create.topics.enable");
  c.delete_topic_enable = v.get_bool("delete.topic.enable");
  c.log_segment_bytes = v.get_int("log.segment.bytes");
  c.log_roll_ms = pick_ms(v, "log.roll.ms", nullptr, "log.roll.hours");
  c.log_retention_ms = pick_ms(v, "log.retention.ms", "log.retention.minutes", "log.retention.hours");
  c.log_retention_bytes = v.get_long("log.retention.bytes");
  c.log_retention_check_interval_ms = v.get_long("log.retention.check.interval.ms");
  c.log_flush_interval_messages = v.get_long("log.flush.interval.messages");
  c.log_flush_interval_ms = v.get_optional_long("log.flush.interval.ms");
  c.log_index_interval_bytes = v.get_int("log.index.interval.bytes");
  c.log_index_size_max_bytes = v.get_int("log.index.size.max.bytes");
  c.log_cleanup_policy = v.get_list("log.cleanup.policy");
  c.compression_type = v.get_string("compression.type");
  c.message_max_bytes = v.get_int("message.max.bytes");
  c.produce_request_decompressed_max_bytes = v.get_int("produce.request.decompressed.max.bytes");
  c.min_insync_replicas = v.get_int("min.insync.replicas");
}

void resolve_limits_and_groups(BrokerConfig& c, const ConfigValues& v) {
  c.socket_request_max_bytes = v.get_int("socket.request.max.bytes");
  c.queued_max_requests = v.get_int("queued.max.requests");
  c.max_connections = v.get_int("max.connections");
  c.socket_send_buffer_bytes = v.get_int("socket.send.buffer.bytes");
  c.socket_receive_buffer_bytes = v.get_int("socket.receive.buffer.bytes");
  c.offsets_topic_num_partitions = v.get_int("offsets.topic.num.partitions");
  c.offsets_topic_replication_factor = int16_t(v.get_int("offsets.topic.replication.factor"));
  c.offsets_retention_ms = int64_t(v.get_int("offsets.retention.minutes")) * 60'000;
  c.group_initial_rebalance_delay_ms = v.get_int("group.initial.rebalance.delay.ms");
  c.group_min_session_timeout_ms = v.get_int("group.min.session.timeout.ms");
  c.group_max_session_timeout_ms = v.get_int("group.max.session.timeout.ms");
  c.group_max_size = v.get_int("group.max.size");
}

}  // namespace

Result<BrokerConfig> BrokerConfig::from_properties(const std::map<std::string, std::string>& props) {
  BrokerConfig c;
  ASSIGN_OR_RETURN(c.values_, definition().parse(props, ConfigSource::kStaticBroker));
  const ConfigValues& v = c.values_;
  RETURN_IF_ERROR(resolve_identity(c, v));
  RETURN_IF_ERROR(resolve_network(c, v));
  resolve_storage(c, v);
  resolve_limits_and_groups(c, v);
  if (c.group_min_session_timeout_ms > c.group_max_session_timeout_ms) {
    return config_error("group.min.session.timeout.ms must not exceed group.max.session.timeout.ms");
  }
  return c;
}

std::map<std::string, std::string> BrokerConfig::single_node_defaults() {
  return {{"offsets.topic.replication.factor", "1"},
          {"transaction.state.log.replication.factor", "1"},
          {"transaction.state.log.min.isr", "1"}};
}

bool BrokerConfig::is_broker() const {
  return std::find(process_roles.begin(), process_roles.end(), "broker") != process_roles.end();
}

bool BrokerConfig::is_controller() const {
  return std::find(process_roles.begin(), process_roles.end(), "controller") != process_roles.end();
}

bool BrokerConfig::is_implicit_single_node() const {
  return is_broker() && is_controller() && controller_quorum_voters.empty() &&
         controller_quorum_bootstrap_servers.empty();
}

const ListenerConfig* BrokerConfig::find_listener(const std::string& name) const {
  for (const auto& l : listeners) {
    if (l.endpoint.name == name) return &l;
  }
  return nullptr;
}

void BrokerConfig::set_bound_port(const std::string& listener_name, uint16_t port) {
  for (auto& l : listeners) {
    if (l.endpoint.name == listener_name && l.endpoint.port == 0) l.endpoint.port = port;
  }
  for (auto* advertised : {&advertised_listeners, &advertised_controller_listeners}) {
    for (auto& a : *advertised) {
      if (a.endpoint.name == listener_name && a.endpoint.port == 0) a.endpoint.port = port;
    }
  }
}

}  // namespace samsa

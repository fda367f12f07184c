#include "config/kraft_rules.h"

#include <algorithm>
#include <set>
#include <vector>

namespace samsa {
namespace {

Error config_error(const std::string& message) { return Error(ErrorKind::kInvalidArgument, message); }

Status require(bool condition, const std::string& message) {
  return condition ? ok_status() : config_error(message);
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::set<int32_t> voter_ids(const BrokerConfig& c) {
  std::set<int32_t> ids;
  for (const auto& voter : c.controller_quorum_voters) ids.insert(voter.id.value());
  return ids;
}

// As Scala prints a Set: Set(1, 2, 3).
std::string scala_set(const std::set<int32_t>& ids) {
  std::string out = "Set(";
  for (int32_t id : ids) out += (out.size() > 4 ? ", " : "") + std::to_string(id);
  return out + ")";
}

std::string joined(const std::set<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ",") + name;
  return out;
}

std::set<std::string> names_of(const std::vector<ListenerConfig>& listeners) {
  std::set<std::string> names;
  for (const auto& l : listeners) names.insert(l.endpoint.name);
  return names;
}

Status quorum_keys_present(const BrokerConfig& c) {
  return require(!c.controller_quorum_voters.empty() || !c.controller_quorum_bootstrap_servers.empty(),
                 "If using process.roles, either controller.quorum.bootstrap.servers must contain the set of "
                 "bootstrap controllers or controller.quorum.voters must contain a parseable set of controllers.");
}

Status node_in_voters(const BrokerConfig& c) {
  std::set<int32_t> ids = voter_ids(c);
  return require(ids.empty() || ids.count(c.node_id.value()) > 0,
                 "If process.roles contains the 'controller' role, the node id " + std::to_string(c.node_id.value()) +
                     " must be included in the set of voters controller.quorum.voters=" + scala_set(ids));
}

Status controller_listener_advertised(const BrokerConfig& c) {
  return require(!c.advertised_controller_listeners.empty(),
                 "controller.listener.names must contain at least one value appearing in the 'listeners' "
                 "configuration when running the KRaft controller role");
}

Status controller_listeners_in_listeners(const BrokerConfig& c) {
  bool all = std::all_of(c.controller_listener_names.begin(), c.controller_listener_names.end(),
                         [&](const std::string& name) { return c.find_listener(name) != nullptr; });
  return require(all,
                 "controller.listener.names must only contain values appearing in the 'listeners' configuration "
                 "when running the KRaft controller role");
}

Status validate_broker_only(const BrokerConfig& c, const std::map<std::string, std::string>& protocols) {
  RETURN_IF_ERROR(quorum_keys_present(c));
  std::set<int32_t> ids = voter_ids(c);
  RETURN_IF_ERROR(require(ids.count(c.node_id.value()) == 0,
                          "If process.roles contains just the 'broker' role, the node id " +
                              std::to_string(c.node_id.value()) +
                              " must not be included in the set of voters controller.quorum.voters=" + scala_set(ids)));
  RETURN_IF_ERROR(require(!c.controller_listener_names.empty(),
                          "controller.listener.names must contain at least one value when running KRaft with just "
                          "the broker role"));
  bool bound = std::any_of(c.controller_listener_names.begin(), c.controller_listener_names.end(),
                           [&](const std::string& name) { return c.find_listener(name) != nullptr; });
  RETURN_IF_ERROR(require(!bound,
                          "controller.listener.names must not contain a value appearing in the 'listeners' "
                          "configuration when running KRaft with just the broker role"));
  for (const auto& name : c.controller_listener_names) {
    RETURN_IF_ERROR(require(protocols.count(name) > 0,
                            "Controller listener with name " + name +
                                " defined in controller.listener.names not found in listener.security.protocol.map  "
                                "(an explicit security mapping for each controller listener is required if "
                                "listener.security.protocol.map is non-empty, or if there are security protocols "
                                "other than PLAINTEXT in use)"));
  }
  return ok_status();
}

Status validate_controller_only(const BrokerConfig& c, const ConfigValues& v) {
  RETURN_IF_ERROR(quorum_keys_present(c));
  RETURN_IF_ERROR(require(c.advertised_controller_listeners.size() == c.listeners.size(),
                          "The listeners config must only contain KRaft controller listeners from "
                          "controller.listener.names when process.roles=controller"));
  if (!v.is_null("inter.broker.listener.name")) {
    RETURN_IF_ERROR(require(!contains(c.controller_listener_names, c.inter_broker_listener_name),
                            "controller.listener.names must not contain an explicitly set inter.broker.listener.name "
                            "configuration value when process.roles=controller'"));
  }
  RETURN_IF_ERROR(node_in_voters(c));
  RETURN_IF_ERROR(controller_listener_advertised(c));
  return controller_listeners_in_listeners(c);
}

Status validate_combined(const BrokerConfig& c) {
  if (c.is_implicit_single_node()) {
    // SAMSA: no quorum keys, so no controller listener is needed; one
    // named must still be bound (BrokerConfig::is_implicit_single_node).
    return controller_listeners_in_listeners(c);
  }
  RETURN_IF_ERROR(quorum_keys_present(c));
  RETURN_IF_ERROR(node_in_voters(c));
  RETURN_IF_ERROR(controller_listener_advertised(c));
  return controller_listeners_in_listeners(c);
}

// Every node with the broker role.
Status validate_broker_listeners(const BrokerConfig& c) {
  std::set<std::string> advertised = names_of(c.advertised_listeners);
  RETURN_IF_ERROR(require(!advertised.empty(),
                          "There must be at least one broker advertised listener. Perhaps all listeners appear in "
                          "controller.listener.names?"));
  RETURN_IF_ERROR(require(advertised.count(c.inter_broker_listener_name) > 0,
                          "inter.broker.listener.name must be a listener name defined in advertised.listeners. The "
                          "valid options based on currently configured listeners are " + joined(advertised)));
  std::set<std::string> bound = names_of(c.listeners);
  bool subset = std::includes(bound.begin(), bound.end(), advertised.begin(), advertised.end());
  return require(subset, "advertised.listeners listener names must be equal to or a subset of the ones defined in "
                         "listeners. Found " + joined(advertised) +
                         ". The valid options based on the current configuration are " + joined(bound));
}

}  // namespace

Status validate_kraft_roles(const BrokerConfig& c, const ConfigValues& v,
                            const std::map<std::string, std::string>& protocols) {
  if (c.is_broker() && c.is_controller()) {
    RETURN_IF_ERROR(validate_combined(c));
  } else if (c.is_broker()) {
    RETURN_IF_ERROR(validate_broker_only(c, protocols));
  } else {
    RETURN_IF_ERROR(validate_controller_only(c, v));
  }
  if (c.is_broker()) RETURN_IF_ERROR(validate_broker_listeners(c));
  return ok_status();
}

}  // namespace samsa

#include "server/cluster_support.h"

#include <string>
#include <vector>

namespace samsa {
namespace {

Error unsupported(const std::string& message) { return Error(ErrorKind::kUnsupported, message); }

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ",") + item;
  return out;
}

Status check_roles(const BrokerConfig& config) {
  if (config.is_broker() && config.is_controller()) return ok_status();
  return unsupported("process.roles=" + joined(config.process_roles) +
                     " is not supported yet: Samsa runs clusters of combined nodes only, where every process is "
                     "both broker and controller and a voter of controller.quorum.voters (a broker-only node "
                     "would observe the metadata quorum and a controller-only node serve no clients, which "
                     "Samsa does not do yet). Set process.roles=broker,controller (the default) on every node.");
}

Status check_bootstrap_servers(const BrokerConfig& config) {
  if (config.controller_quorum_bootstrap_servers.empty() || !config.controller_quorum_voters.empty()) {
    return ok_status();
  }
  return unsupported("controller.quorum.bootstrap.servers is set and controller.quorum.voters is not: a dynamic "
                     "quorum (KIP-853) is not supported yet. Set controller.quorum.voters to the static quorum "
                     "(id@host:port of each node's controller listener, the same list on every node), or leave "
                     "both keys empty for a single node (the default).");
}

}  // namespace

Status check_supported_cluster(const BrokerConfig& config) {
  RETURN_IF_ERROR(check_roles(config));
  return check_bootstrap_servers(config);
}

}  // namespace samsa

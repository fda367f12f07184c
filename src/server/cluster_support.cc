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
                     " is not supported yet: Samsa runs single-node clusters only, where one process is both "
                     "broker and controller (a broker-only or controller-only node needs other nodes to form a "
                     "cluster with, over the multi-node controller quorum, which Samsa does not have yet). Set "
                     "process.roles=broker,controller (the default).");
}

Status check_voters(const BrokerConfig& config) {
  std::vector<std::string> others;
  for (const QuorumVoter& voter : config.controller_quorum_voters) {
    if (voter.id != config.node_id) others.push_back(voter.to_string());
  }
  if (others.empty()) return ok_status();
  const std::string self = std::to_string(config.node_id.value());
  return unsupported("controller.quorum.voters names other nodes than this one (node.id=" + self +
                     "): " + joined(others) +
                     ". Multi-node clusters are not supported yet: a quorum of more than one voter needs the "
                     "multi-node controller quorum, which Samsa does not have yet, and this node would not join "
                     "the others but start a separate one-node cluster. Leave controller.quorum.voters empty (the "
                     "default) or list this node only, on its controller listener (for example " + self +
                     "@localhost:9093 with listeners=PLAINTEXT://localhost:9092,CONTROLLER://localhost:9093 and "
                     "controller.listener.names=CONTROLLER, as config/combined.properties does).");
}

Status check_bootstrap_servers(const BrokerConfig& config) {
  if (config.controller_quorum_bootstrap_servers.empty() || !config.controller_quorum_voters.empty()) {
    return ok_status();
  }
  return unsupported("controller.quorum.bootstrap.servers is set and controller.quorum.voters is not: a dynamic "
                     "quorum (KIP-853) is found and joined through the multi-node controller quorum, which Samsa "
                     "does not have yet. For a single node, leave both keys empty (the default) or set "
                     "controller.quorum.voters to this node only (config/combined.properties).");
}

}  // namespace

Status check_supported_cluster(const BrokerConfig& config) {
  RETURN_IF_ERROR(check_roles(config));
  RETURN_IF_ERROR(check_voters(config));
  return check_bootstrap_servers(config);
}

}  // namespace samsa

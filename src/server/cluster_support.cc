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
                     "cluster with, and Samsa cannot form a multi-node cluster yet). Set "
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
                     ". Multi-node clusters are not supported yet: this node would not join them but start a "
                     "separate one-node cluster. Leave controller.quorum.voters empty (the default) or list this "
                     "node only (for example " + self + "@localhost:9093).");
}

}  // namespace

Status check_supported_cluster(const BrokerConfig& config) {
  RETURN_IF_ERROR(check_roles(config));
  return check_voters(config);
}

}  // namespace samsa

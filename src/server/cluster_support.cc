#include "server/cluster_support.h"

#include <string>

namespace samsa {

Status check_supported_cluster(const BrokerConfig& config) {
  if (config.controller_quorum_bootstrap_servers.empty() || !config.controller_quorum_voters.empty()) {
    return ok_status();
  }
  return Error(ErrorKind::kUnsupported,
               "controller.quorum.bootstrap.servers is set and controller.quorum.voters is not: a dynamic "
               "quorum (KIP-853) is not supported yet. Set controller.quorum.voters to the static quorum "
               "(id@host:port of each controller's controller listener, the same list on every node), or "
               "leave both keys empty for a single node (the default).");
}

}  // namespace samsa

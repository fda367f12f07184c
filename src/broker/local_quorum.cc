#include "broker/local_quorum.h"

namespace samsa {

std::vector<QuorumEndpoint> voter_endpoints(const BrokerConfig& config) {
  std::string listener = config.controller_listener_names.empty() ? "" : config.controller_listener_names.front();
  std::vector<QuorumEndpoint> out;
  for (const QuorumVoter& v : config.controller_quorum_voters) out.push_back({v.id, listener, v.host, v.port});
  return out;
}

LocalQuorum::LocalQuorum(const BrokerConfig& config, std::function<int64_t()> end_offset, Clock& clock)
    : self_(config.node_id), nodes_(voter_endpoints(config)), end_offset_(std::move(end_offset)), clock_(clock) {}

QuorumDescription LocalQuorum::describe_quorum() const {
  QuorumDescription q;
  q.is_leader = true;
  q.leader = self_;
  q.epoch = 1;
  q.high_watermark = end_offset_();
  int64_t now = clock_.wall_ms();
  q.voters.push_back(ReplicaDescription{self_, q.high_watermark, now, now});
  q.nodes = nodes_;
  return q;
}

}  // namespace samsa

#pragma once
// LocalQuorum: the metadata quorum of today's single node
// (process.roles=broker,controller, this node the only voter of
// controller.quorum.voters, or implicitly so): no RaftDriver runs the
// metadata log yet (MetadataStore commits by appending and fsyncing), so
// the quorum is this node alone: the leader, of epoch 1 (the epoch a
// one-voter KRaft quorum's first election gives it), and everything
// appended is committed, so the high watermark and the voter's log end
// offset are the metadata log's end offset. Replaced by
// describe_raft_quorum(driver) when the metadata log runs on a RaftDriver.

#include <functional>

#include "base/clock.h"
#include "config/broker_config.h"
#include "controller/quorum_description.h"

namespace samsa {

class LocalQuorum final : public QuorumView {
 public:
  LocalQuorum(const BrokerConfig& config, std::function<int64_t()> end_offset, Clock& clock);
  QuorumDescription describe_quorum() const override;

 private:
  NodeId self_;
  std::vector<QuorumEndpoint> nodes_;
  std::function<int64_t()> end_offset_;
  Clock& clock_;
};

// The controller listener endpoints of controller.quorum.voters (the first
// of controller.listener.names names them), for DescribeQuorum v2's Nodes.
std::vector<QuorumEndpoint> voter_endpoints(const BrokerConfig& config);

}  // namespace samsa

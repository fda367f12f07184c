#include "replication/isr_state.h"

#include <algorithm>

#include "base/assert.h"

namespace samsa::replication {

bool contains(const std::vector<NodeId>& ids, NodeId id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

void IsrState::commit(std::vector<NodeId> isr) {
  isr_ = std::move(isr);
  pending_.reset();
  expanding_.reset();
}

void IsrState::begin(AlterPartitionProposal proposal) {
  ASSERT_MSG(!pending_, "one AlterPartition in flight at a time");
  expanding_.reset();
  if (proposal.expand) {
    ASSERT(proposal.new_isr.size() == isr_.size() + 1);
    for (const IsrMember& m : proposal.new_isr) {
      if (!contains(m.id)) expanding_ = m.id;
    }
    ASSERT(expanding_.has_value());
  } else {
    ASSERT(proposal.new_isr.size() < isr_.size());
    for (const IsrMember& m : proposal.new_isr) ASSERT(contains(m.id));
  }
  pending_ = std::move(proposal);
}

std::vector<NodeId> IsrState::maximal_isr() const {
  std::vector<NodeId> out = isr_;
  if (expanding_) out.push_back(*expanding_);
  return out;
}

bool IsrState::contains(NodeId id) const { return replication::contains(isr_, id); }

bool IsrState::maximal_contains(NodeId id) const { return contains(id) || (expanding_ && *expanding_ == id); }

}  // namespace samsa::replication

#pragma once
// IsrState: a leader's view of the ISR — the last committed ISR and, while
// an AlterPartition is in flight, the change it proposed. Kafka's
// PartitionState (CommittedPartitionState, PendingExpandIsr,
// PendingShrinkIsr in core/.../cluster/Partition.scala).
//
// The "maximal ISR" (KIP-497) is what the high watermark and acks=-1 wait
// for: the committed ISR plus a member being added (stricter, so safe
// whether or not the controller accepts), but still including the members
// being removed (a shrink only counts once committed, or a failed
// AlterPartition would have let the HW pass a member it still holds in
// the ISR). At most one change is in flight.

#include <cstdint>
#include <optional>
#include <vector>

#include "model/ids.h"
#include "replication/replication_types.h"

namespace samsa::replication {

class IsrState {
 public:
  // The committed ISR (from the metadata or an AlterPartition answer);
  // forgets any pending change.
  void commit(std::vector<NodeId> isr);
  // A proposal was sent: `proposal.new_isr` adds one member (expand) or
  // removes some (shrink) relative to the committed ISR.
  void begin(AlterPartitionProposal proposal);
  // The controller refused without applying: back to the committed ISR.
  void revert() {
    pending_.reset();
    expanding_.reset();
  }

  const std::vector<NodeId>& isr() const { return isr_; }  // committed
  std::vector<NodeId> maximal_isr() const;
  bool contains(NodeId id) const;          // in the committed ISR
  bool maximal_contains(NodeId id) const;  // in the maximal ISR
  bool in_flight() const { return pending_.has_value(); }
  const std::optional<AlterPartitionProposal>& pending() const { return pending_; }

 private:
  std::vector<NodeId> isr_;
  std::optional<AlterPartitionProposal> pending_;
  std::optional<NodeId> expanding_;  // the member a pending expansion adds
};

bool contains(const std::vector<NodeId>& ids, NodeId id);

}  // namespace samsa::replication

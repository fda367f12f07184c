#pragma once
// InvariantChecker: Raft's safety properties, checked after every simulator
// event (Figure 3 of the Raft paper, plus what the state machine sees):
//   - election safety: at most one leader per term;
//   - log matching: two logs with an entry of the same index and term agree
//     on every entry up to it;
//   - leader completeness: a leader's log holds every entry committed in an
//     earlier term;
//   - committed entries are never lost or changed (same term and bytes at an
//     index, on every node, forever);
//   - state machine safety: every node applies the same entry at an index and
//     reaches the same state after it;
//   - a running node's commit index never decreases.
// The first violation is kept (with the step it happened at); later calls are
// no-ops so a run can stop and report it.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "raft/types.h"
#include "testing/sim_node.h"

namespace samsa::sim {

uint64_t entry_hash(const raft::Entry& e);

class InvariantChecker {
 public:
  // After an event that touched `x`: check it against everyone.
  void check_node(const SimNode& x, const std::vector<SimNode>& all);
  void on_apply(NodeId node, const raft::Entry& entry, uint64_t state_hash);
  void on_snapshot_restore(NodeId node, raft::LogIndex index, uint64_t state_hash);
  void on_restart(NodeId node);

  bool failed() const { return !failure_.empty(); }
  const std::string& failure() const { return failure_; }
  void fail(std::string what);
  size_t committed_count() const { return committed_.size(); }
  raft::LogIndex max_commit() const { return max_commit_; }
  size_t leaders_elected() const { return leaders_.size(); }

 private:
  struct Committed {
    raft::Term term;
    uint64_t hash;
    raft::Term seen_in_term;  // the term of the first node seen committing it
  };
  void check_commit(const SimNode& x);
  void check_matching(const SimNode& x, const SimNode& y);
  void check_leader_completeness(const SimNode& x);

  std::map<raft::Term, NodeId> leaders_;
  std::map<raft::LogIndex, Committed> committed_;
  std::map<raft::LogIndex, uint64_t> state_after_;  // kv hash after applying index
  std::map<NodeId, raft::LogIndex> last_commit_;     // while running
  std::map<NodeId, raft::LogIndex> last_applied_;
  raft::LogIndex max_commit_;
  std::string failure_;
};

}  // namespace samsa::sim

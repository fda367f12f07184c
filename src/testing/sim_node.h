#pragma once
// SimNode: one simulated server — a RaftNode (null while crashed), its
// key-value state machine, its disk, and the client commands it proposed and
// still owes an answer. Plain data; SimCluster drives it.

#include <cstdint>
#include <memory>
#include <set>
#include <utility>

#include "raft/raft_node.h"
#include "testing/kv_machine.h"
#include "testing/sim_disk.h"

namespace samsa::sim {

struct SimNode {
  NodeId id;
  bool voter = true;
  std::unique_ptr<raft::RaftNode> raft;  // null while down
  KvMachine kv;
  raft::LogIndex kv_applied;  // last index applied to kv
  SimDisk disk;
  uint64_t incarnation = 0;  // bumps on every crash; stale timers check it
  std::set<std::pair<uint32_t, uint64_t>> pending;  // (client, seq) awaiting apply

  bool up() const { return raft != nullptr; }
};

}  // namespace samsa::sim

#pragma once
// ReplicaInvariants: the promises of replication checked on the replicas
// themselves (the real Partition and Log objects of every node of a
// SimBrokerCluster), where LogHistory (log_history.h) judges only what
// clients saw. Cheap enough to run every few simulated milliseconds: each
// check reads only the bytes committed since the last one.
//
// - kReplicasDiverge: a batch below the highest HW any leader reached (the
//   committed prefix) differs on a replica from the batch committed there
//   (base offset, last offset, leader epoch, CRC), or a replica holds a
//   batch where none was committed. Every replica is judged, the leader's
//   own log too, below its own HW: what it knows is committed (a follower
//   behind, or holding a diverging tail it has yet to truncate, is not
//   wrong).
// - kLeaderWatermarkDecreased: a leader's HW went down within one leader
//   epoch of one incarnation of the node.
// - kTwoLeadersInEpoch: two nodes led one partition with one leader epoch
//   (at once or one after the other): at most one may accept writes there.
// - kFencedLeader: a node's committed image names a fenced broker as a
//   partition's leader.
//
// Not thread-safe; runs on the world's thread between events.

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "testing/broker_cluster_sim.h"
#include "testing/log_history.h"  // Violation

namespace samsa::sim {

class ReplicaInvariants {
 public:
  ReplicaInvariants(SimBrokerCluster& cluster, std::vector<std::pair<std::string, int32_t>> partitions)
      : cluster_(cluster), partitions_(std::move(partitions)) {}

  // Judges the cluster as it is now; new violations are appended.
  void check();
  const std::vector<Violation>& violations() const { return violations_; }
  // How many committed batches are known (for the summary line).
  size_t committed_batches() const;

 private:
  struct Batch {
    int64_t last_offset;
    int32_t leader_epoch;
    uint32_t crc;
  };
  struct Committed {
    std::map<int64_t, Batch> batches;  // base offset -> the committed batch
    int64_t end = 0;                   // first offset not known committed
  };
  using Tp = std::pair<std::string, int32_t>;

  void check_partition(const Tp& tp);
  void learn_committed(const Tp& tp, int node, Partition& leader);
  void compare_replica(const Tp& tp, int node, Partition& replica);
  void check_images();
  void violation(Violation::Kind kind, const Tp& tp, std::string detail);

  SimBrokerCluster& cluster_;
  std::vector<Tp> partitions_;
  std::map<Tp, Committed> committed_;
  std::map<std::pair<Tp, int>, int64_t> compared_to_;                     // (tp, node) -> offset judged up to
  std::map<std::tuple<Tp, int, uint64_t, int32_t>, int64_t> leader_hw_;   // (tp, node, incarnation, epoch) -> HW
  std::map<std::pair<Tp, int32_t>, int> leader_of_epoch_;                 // (tp, epoch) -> node
  std::vector<Violation> violations_;
};

}  // namespace samsa::sim

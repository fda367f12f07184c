#pragma once
// Replica placement as Kafka's KRaft controller does it
// (org.apache.kafka.metadata.placement.StripedReplicaPlacer): pure, with
// the randomness injected, so a test can predict and a seed replays.
//
// What it guarantees, as Kafka's does:
// - the leader (first replica) of every partition is an unfenced broker;
//   fenced brokers are used for the other replicas only when the unfenced
//   ones are exhausted;
// - with R racks (brokers without broker.rack form one rack of their own),
//   the replicas of a partition are on min(R, replication factor) different
//   racks: each replica on a different rack while racks remain;
// - leadership and replicas are striped round-robin from a random start
//   (racks and the brokers of each rack shuffled), so every broker gets
//   partitions and, with one rack or racks of equal size, leaders differ
//   by at most one between brokers; after as many partitions as there are
//   unfenced brokers, the lists are reshuffled so assignments do not repeat.

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "base/rng.h"
#include "model/ids.h"

namespace samsa {

// Kafka's UsableBroker: a registered broker not in controlled shutdown.
struct UsableBroker {
  NodeId id;
  std::optional<std::string> rack;
  bool fenced = false;
};

using ReplicaAssignment = std::vector<std::vector<NodeId>>;  // partition -> replicas

// The placement of `partitions` new partitions with `replication_factor`
// replicas each, or Kafka's InvalidReplicationFactorException message
// ("... cannot be reached because only 1 broker(s) are registered.").
std::variant<ReplicaAssignment, std::string> place_replicas(const std::vector<UsableBroker>& brokers,
                                                             int32_t partitions, int16_t replication_factor,
                                                             Rng& rng);

}  // namespace samsa

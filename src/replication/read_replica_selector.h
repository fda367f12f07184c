#pragma once
// Fetch from the closest replica (KIP-392): which replica a consumer with
// `client.rack` should read a partition from, as Kafka's
// RackAwareReplicaSelector chooses it on the leader. The candidates are
// the leader and the followers that can serve the fetch offset now (in the
// ISR, with it between their log start and log end: a follower outside the
// ISR may be far behind, and Kafka also leaves those out).
//
// Pure: the caller (the Fetch handler) gathers the views from the image
// (racks) and the leader's replication state (follower progress).

#include <optional>
#include <string>
#include <vector>

#include "model/ids.h"

namespace samsa::replication {

struct ReadReplicaView {
  NodeId id;
  std::optional<std::string> rack;  // broker.rack of its broker
  Offset log_end;
};

// `followers` are the candidates other than the leader. Returns the leader
// when the client names no rack, when no candidate is on its rack, or when
// the leader is; else the follower on the client's rack with the highest
// log end (ties: the lowest id, so the answer is stable).
NodeId select_read_replica(const std::string& client_rack, const ReadReplicaView& leader,
                           const std::vector<ReadReplicaView>& followers);

}  // namespace samsa::replication

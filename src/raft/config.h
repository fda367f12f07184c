#pragma once
// RaftConfig: static membership and timing of one Raft node. Times are in
// ticks: the caller calls RaftNode::tick() at a fixed interval, so the core
// never reads a clock.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/ids.h"

namespace samsa::raft {

struct RaftConfig {
  NodeId id;
  std::vector<NodeId> voters;     // vote, count for commit, may lead
  std::vector<NodeId> observers;  // replicate only (KRaft: brokers)
  // A follower campaigns after a random timeout in [election_ticks, 2*election_ticks).
  int election_ticks = 10;
  int heartbeat_ticks = 2;  // < election_ticks
  bool pre_vote = true;       // KIP-996: don't bump terms before a majority would vote
  bool check_quorum = true;   // leader steps down without a live majority; followers
                              // with a live leader ignore vote requests (lease)
  size_t max_inflight_appends = 4;      // per follower in the replicate state
  size_t max_entries_per_append = 16;   // per message
  size_t max_uncommitted_entries = 256; // proposals beyond this are refused
  uint64_t seed = 1;                    // election jitter; the core's only randomness
};

}  // namespace samsa::raft

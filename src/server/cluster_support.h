#pragma once
// What Samsa can run today, checked once at startup (run_server): a
// single node (broker and controller, the only voter of its own quorum),
// or a cluster of a static quorum (controller.quorum.voters, the same list
// on every node) whose nodes are combined (process.roles=broker,controller),
// controller-only (voters that serve no clients) or broker-only (observers
// of the quorum's metadata log), in any mix (docs/cluster.md).
//
// Kafka accepts more: a dynamic quorum found through
// controller.quorum.bootstrap.servers alone (KIP-853). Samsa parses and
// validates that key as Kafka does (config/kraft_rules.h), but such a node
// would not know the voters' ids and controller listeners, so it is refused
// at startup, saying what to change.

#include "base/result.h"
#include "config/broker_config.h"

namespace samsa {

// ok, or an error saying what is unsupported and what to set instead.
Status check_supported_cluster(const BrokerConfig& config);

}  // namespace samsa

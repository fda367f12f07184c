#pragma once
// What Samsa can run today, checked once at startup (run_server): a
// single node (broker and controller, the only voter of its own quorum) or
// a cluster of combined nodes (process.roles=broker,controller on each, all
// of them voters of a static controller.quorum.voters).
//
// Kafka accepts more: broker-only and controller-only nodes, a dynamic
// quorum found through controller.quorum.bootstrap.servers. Samsa parses
// and validates those keys as Kafka does (config/kraft_rules.h), but such a
// node would not work (a broker-only node needs the metadata log pushed to
// it as an observer), so it is refused at startup, saying what to change.

#include "base/result.h"
#include "config/broker_config.h"

namespace samsa {

// ok, or an error saying what is unsupported and what to set instead.
Status check_supported_cluster(const BrokerConfig& config);

}  // namespace samsa

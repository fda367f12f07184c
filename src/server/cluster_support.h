#pragma once
// What Samsa can run today, checked once at startup (run_server): a
// single-node cluster, one process that is both broker and controller and
// the only voter of its own quorum.
//
// Kafka accepts more: broker-only and controller-only nodes, a quorum of
// several voters, a dynamic quorum found through
// controller.quorum.bootstrap.servers. Samsa parses and validates those keys
// as Kafka does (config/kraft_rules.h), but has no multi-node controller
// quorum yet, so such a node would not join anyone: three
// processes configured as one cluster would start as three one-node clusters
// (three cluster ids, different topic ids), silently. Refusing at startup
// with what to change is the honest answer; this check goes away when
// multi-node clusters work.

#include "base/result.h"
#include "config/broker_config.h"

namespace samsa {

// ok, or an error saying what is unsupported and what to set instead.
Status check_supported_cluster(const BrokerConfig& config);

}  // namespace samsa

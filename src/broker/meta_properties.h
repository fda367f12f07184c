#pragma once
// meta.properties: each log dir's identity file, as Kafka's KRaft mode
// writes it (version=1, cluster.id, node.id, directory.id). On start every
// dir must agree on cluster.id and name this node; a new dir gets the file.
// The first start of a fresh node picks the cluster id (cluster.id from the
// config if set, else a random one), which is what `kafka-storage format`
// does by hand in Kafka.

#include <string>

#include "base/result.h"
#include "base/rng.h"
#include "config/broker_config.h"
#include "io/file_system.h"

namespace samsa {

// Returns the cluster id; fails if dirs disagree or belong to another node.
Result<std::string> ensure_meta_properties(FileSystem& files, const BrokerConfig& config, Rng& rng);

}  // namespace samsa

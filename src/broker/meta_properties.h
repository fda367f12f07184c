#pragma once
// meta.properties: each log dir's identity file, as Kafka's KRaft mode
// writes it (version=1, cluster.id, node.id, directory.id), in every log dir
// and the metadata log dir.
//
// Two ways to write it, as in Kafka:
// - format_storage(): `samsa storage format`, kafka-storage.sh's format;
// - ensure_meta_properties() at startup: the implicit single node
//   (BrokerConfig::is_implicit_single_node, what `samsa server` runs with no
//   config) formats its own fresh dirs, its cluster id from cluster.id if
//   set, else a random one; any other node must have been formatted.
//   Either way, a formatted node whose new, empty log dir has no file yet
//   gets one with the node's cluster id (Kafka does the same).
// At startup every file must name this node and one cluster, else the
// server fails with what is wrong and how to fix it.

#include <string>
#include <vector>

#include "base/result.h"
#include "base/rng.h"
#include "config/broker_config.h"

namespace samsa {

// The dirs that hold a meta.properties: log.dirs and metadata.log.dir,
// sorted, each once (kafka-storage's configToLogDirectories).
std::vector<std::string> storage_dirs(const BrokerConfig& config);

// Returns the cluster id; fails if dirs disagree, belong to another node,
// or a node that must be formatted is not.
Result<std::string> ensure_meta_properties(const BrokerConfig& config, Rng& rng);

struct FormatOptions {
  std::string cluster_id;
  bool ignore_formatted = false;
  bool standalone = false;
};

// kafka-storage.sh format: writes meta.properties into every unformatted
// dir. Returns the lines to print; fails with Kafka's messages (a dir
// already formatted without ignore_formatted, an invalid cluster id,
// --standalone on a node that is no controller, ...).
Result<std::vector<std::string>> format_storage(const BrokerConfig& config, const FormatOptions& options, Rng& rng);

}  // namespace samsa

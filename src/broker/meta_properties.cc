#include "broker/meta_properties.h"

#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "base/log.h"
#include "config/properties.h"
#include "model/uuid.h"
#include "storage/file_util.h"

namespace samsa {
namespace {

constexpr const char* kFileName = "meta.properties";
constexpr size_t kMaxFileBytes = 64 << 10;  // the real file is about 150 bytes

std::string meta_path(const std::string& dir) { return (std::filesystem::path(dir) / kFileName).string(); }

Error invalid(const std::string& message) { return Error(ErrorKind::kInvalidArgument, message); }

Status write_meta_properties(FileSystem& files, const std::string& dir, const std::string& cluster_id, NodeId node,
                             Rng& rng) {
  Status created = file_util::create_directories_durably(files, dir);
  if (!created.ok()) {
    return Error(created.error().kind(), "Unable to create storage directory " + dir + ": " + created.error().message());
  }
  // Kafka's key order (PropertiesUtils writes them sorted).
  std::string content = "#\n#Written by Samsa\ncluster.id=" + cluster_id + "\ndirectory.id=" +
                        Uuid::random(rng).to_string() + "\nnode.id=" + std::to_string(node.value()) +
                        "\nversion=1\n";
  return file_util::write_file_atomic(files, meta_path(dir), content);
}

struct StoredIdentity {
  std::string path;
  std::string cluster_id;
  std::string node_id;
};

// The meta.properties of each dir that has one.
Result<std::map<std::string, StoredIdentity>> load_identities(FileSystem& files, const std::vector<std::string>& dirs) {
  std::map<std::string, StoredIdentity> found;
  for (const std::string& dir : dirs) {
    std::string path = meta_path(dir);
    auto text = file_util::read_file(files, path, kMaxFileBytes);
    if (!text.ok() && text.error().kind() == ErrorKind::kNotFound) continue;
    if (!text.ok()) return text.error();
    Properties props = parse_properties(*text);
    auto cluster = props.find("cluster.id");
    auto node = props.find("node.id");
    if (cluster == props.end() || node == props.end()) {
      return Error(ErrorKind::kCorrupt, path + " has no " + (cluster == props.end() ? "cluster.id" : "node.id") +
                                            ": it was not written by kafka-storage or samsa storage format. Move it "
                                            "away and format the directory again.");
    }
    found[dir] = StoredIdentity{path, cluster->second, node->second};
  }
  return found;
}

// Kafka's MetaPropertiesEnsemble.verify messages, then how to fix it.
Status verify_identities(const BrokerConfig& config, const std::map<std::string, StoredIdentity>& found,
                         std::optional<std::string>& cluster_id) {
  const std::string node = std::to_string(config.node_id.value());
  for (const auto& [dir, stored] : found) {
    if (stored.node_id != node) {
      return invalid("Stored node id " + stored.node_id + " doesn't match previous node id " + node + " in " +
                     stored.path + ". If you moved your data, make sure your configured node id matches. If you " +
                     "intend to create a new node, you should remove all data in your data directories.");
    }
    if (cluster_id && *cluster_id != stored.cluster_id) {
      return invalid("Invalid cluster.id in: " + stored.path + ". Expected " + *cluster_id + ", but read " +
                     stored.cluster_id + ". This directory belongs to another cluster: point log.dirs and " +
                     "metadata.log.dir at this node's directories (and cluster.id, if set, at its cluster), or, to " +
                     "reuse the directory for this cluster and lose its data, empty it and run `samsa storage " +
                     "format --cluster-id " + *cluster_id + " --config FILE`.");
    }
    cluster_id = stored.cluster_id;
  }
  return ok_status();
}

}  // namespace

std::vector<std::string> storage_dirs(const BrokerConfig& config) {
  std::set<std::string> dirs(config.log_dirs.begin(), config.log_dirs.end());
  dirs.insert(config.metadata_log_dir);
  return std::vector<std::string>(dirs.begin(), dirs.end());
}

Result<std::string> ensure_meta_properties(FileSystem& files, const BrokerConfig& config, Rng& rng) {
  std::vector<std::string> dirs = storage_dirs(config);
  ASSIGN_OR_RETURN(auto found, load_identities(files, dirs));
  std::optional<std::string> cluster_id = config.cluster_id;
  RETURN_IF_ERROR(verify_identities(config, found, cluster_id));
  if (!found.count(config.metadata_log_dir) && !config.is_implicit_single_node()) {
    return invalid("No `meta.properties` found in " + config.metadata_log_dir +
                   " (have you run `samsa storage format` to format the directory?). A node that names a "
                   "controller quorum (controller.quorum.voters or controller.quorum.bootstrap.servers) is "
                   "formatted first, as in Kafka: samsa storage format --cluster-id \"$(samsa storage "
                   "random-uuid)\" --config FILE; every node of one cluster gets the same id.");
  }
  if (!cluster_id) cluster_id = Uuid::random(rng).to_string();
  for (const std::string& dir : dirs) {
    if (found.count(dir)) continue;
    RETURN_IF_ERROR(write_meta_properties(files, dir, *cluster_id, config.node_id, rng));
    LOG_INFO("broker", "formatted log dir {} for cluster {}", dir, *cluster_id);
  }
  return *cluster_id;
}

Result<std::vector<std::string>> format_storage(FileSystem& files, const BrokerConfig& config, const FormatOptions& options,
                                                Rng& rng) {
  auto parsed = Uuid::parse(options.cluster_id);
  if (!parsed || parsed->is_zero()) {
    return invalid("Cluster ID string " + options.cluster_id +
                   " does not appear to be a valid UUID: expected 22 characters of URL-safe base64 (16 bytes, "
                   "not all zero), as `samsa storage random-uuid` prints");
  }
  if (config.cluster_id && *config.cluster_id != options.cluster_id) {
    return invalid("--cluster-id " + options.cluster_id + " differs from cluster.id " + *config.cluster_id +
                   " in the configuration; give the same id, or remove cluster.id from the configuration");
  }
  if (options.standalone) {
    if (!config.is_controller()) return invalid("You can only use --standalone on a controller.");
    if (config.advertised_controller_listeners.empty()) return invalid("No controller listeners found.");
  } else if (config.is_controller() && config.controller_quorum_voters.empty() &&
             !config.is_implicit_single_node()) {
    return invalid("Because controller.quorum.voters is not set on this controller, you must specify one of the "
                   "following: --standalone, --initial-controllers, or --no-initial-controllers. (Samsa has "
                   "--standalone only, for now.)");
  }
  std::vector<std::string> unformatted;
  for (const std::string& dir : storage_dirs(config)) {
    ASSIGN_OR_RETURN(bool formatted, files.exists(meta_path(dir)));
    if (!formatted) {
      unformatted.push_back(dir);
    } else if (!options.ignore_formatted) {
      return invalid("Log directory " + dir + " is already formatted. Use --ignore-formatted to ignore this " +
                     "directory and format the others.");
    }
  }
  if (unformatted.empty()) return std::vector<std::string>{"All of the log directories are already formatted."};
  std::vector<std::string> lines;
  if (options.standalone) {
    // Kafka writes this voter into the metadata log's first checkpoint
    // (KIP-853); Samsa's quorum does not read a voter set from storage yet,
    // and `samsa server` refuses a dynamic quorum until it does.
    const Endpoint& e = config.advertised_controller_listeners.front().endpoint;
    lines.push_back("Initial voter (--standalone): " + std::to_string(config.node_id.value()) + "@" +
                    (e.host.empty() ? "localhost" : e.host) + ":" + std::to_string(e.port));
  }
  for (const std::string& dir : unformatted) {
    RETURN_IF_ERROR(write_meta_properties(files, dir, options.cluster_id, config.node_id, rng));
    lines.push_back(std::string("Formatting ") + (dir == config.metadata_log_dir ? "metadata" : "data") +
                    " directory " + dir);
  }
  return lines;
}

}  // namespace samsa

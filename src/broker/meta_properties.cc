#include "broker/meta_properties.h"

#include <filesystem>
#include <set>

#include "base/log.h"
#include "model/uuid.h"
#include "config/properties.h"
#include "storage/file_util.h"

namespace samsa {
namespace {
constexpr const char* kFileName = "meta.properties";
constexpr size_t kMaxFileBytes = 64 << 10;  // the real file is about 150 bytes
}  // namespace

Result<std::string> ensure_meta_properties(FileSystem& files, const BrokerConfig& config, Rng& rng) {
  std::set<std::string> dirs(config.log_dirs.begin(), config.log_dirs.end());
  dirs.insert(config.metadata_log_dir);
  std::optional<std::string> cluster_id = config.cluster_id;
  std::vector<std::string> missing;
  for (const std::string& dir : dirs) {
    Status created = files.create_directories(dir);
    if (!created.ok()) return Error(created.error().kind(), "cannot create log dir: " + created.error().message());
    std::string path = dir + "/" + kFileName;
    auto text = file_util::read_file(files, path, kMaxFileBytes);
    if (!text.ok() && text.error().kind() == ErrorKind::kNotFound) {
      missing.push_back(dir);
      continue;
    }
    if (!text.ok()) return text.error();
    Properties props = parse_properties(*text);
    auto node = props.find("node.id");
    if (node == props.end() || node->second != std::to_string(config.node_id.value())) {
      return Error(ErrorKind::kInvalidArgument, path + " belongs to node " +
                                                    (node == props.end() ? "?" : node->second) + ", not node " +
                                                    std::to_string(config.node_id.value()));
    }
    auto id = props.find("cluster.id");
    if (id == props.end()) return Error(ErrorKind::kCorrupt, path + " has no cluster.id");
    if (cluster_id && *cluster_id != id->second) {
      return Error(ErrorKind::kInvalidArgument,
                   path + " has cluster.id " + id->second + " but this node belongs to " + *cluster_id);
    }
    cluster_id = id->second;
  }
  if (!cluster_id) cluster_id = Uuid::random(rng).to_string();
  for (const std::string& dir : missing) {
    std::string content = "#\n#Written by Samsa\nversion=1\ncluster.id=" + *cluster_id +
                          "\nnode.id=" + std::to_string(config.node_id.value()) +
                          "\ndirectory.id=" + Uuid::random(rng).to_string() + "\n";
    RETURN_IF_ERROR(file_util::write_file_atomic(files, std::filesystem::path(dir) / kFileName, content));
    LOG_INFO("broker", "formatted log dir {} for cluster {}", dir, *cluster_id);
  }
  return *cluster_id;
}

}  // namespace samsa

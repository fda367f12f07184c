#pragma once
// partition.metadata: Kafka's PartitionMetadataFile, one per partition
// directory, naming the topic id the directory belongs to. Directory names
// say only `<topic>-<partition>`; a topic deleted and re-created under the
// same name gets a new id, so the id is what tells an old directory (left by
// a crash during DeleteTopics) from the current partition. Format
// (docs/formats/log-segments.md):
//
//   version: 0
//   topic_id: <Kafka's 22-character base64 uuid>
//
// Written atomically (tmp, fsync, rename, fsync of the partition dir) before
// the log takes its first append.

#include <filesystem>
#include <optional>

#include "base/result.h"
#include "io/file_system.h"
#include "model/uuid.h"

namespace samsa {

inline constexpr const char* kPartitionMetadataFile = "partition.metadata";

Status write_partition_metadata(FileSystem& files, const std::filesystem::path& partition_dir, const Uuid& topic_id);
// nullopt when the file is absent; kCorrupt when it is not the format above
// (or names the zero uuid).
Result<std::optional<Uuid>> read_partition_metadata(FileSystem& files, const std::filesystem::path& partition_dir);

}  // namespace samsa

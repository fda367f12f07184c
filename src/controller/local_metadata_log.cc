#include "controller/local_metadata_log.h"

#include "base/assert.h"
#include "base/log.h"
#include "controller/metadata_codec.h"
#include "model/record_batch.h"
#include "storage/log_batches.h"

namespace samsa {
namespace {

const TopicPartition kMetadataPartition{"__cluster_metadata", PartitionId(0)};
constexpr int32_t kReadChunkBytes = 1 << 20;

LogConfig metadata_log_config() {
  LogConfig config;
  config.segment_bytes = 64 * 1024 * 1024;
  config.retention_ms = -1;  // never delete metadata (snapshots will trim it)
  config.flush_messages = 1;
  // Metadata records are small: 1 MiB of index (128k entries, one per 4 KiB)
  // covers a whole 64 MiB segment, and each roll allocates 1 MiB, not 10.
  config.segment_index_bytes = 1024 * 1024;
  return config;
}

}  // namespace

Result<std::unique_ptr<LocalMetadataLog>> LocalMetadataLog::open(FileSystem& files,
                                                                 const std::filesystem::path& metadata_dir,
                                                                 Clock& clock) {
  std::filesystem::path dir = metadata_dir / kMetadataPartition.to_string();
  ASSIGN_OR_RETURN(auto log,
                   Log::open(files, dir, kMetadataPartition, metadata_log_config(), clock, RecoveryOptions{}));
  std::unique_ptr<LocalMetadataLog> opened(new LocalMetadataLog(std::move(log), clock));
  RETURN_IF_ERROR(opened->replay());
  LOG_INFO("metadata", "replayed {} metadata records: {} topics, {} brokers", opened->log_->log_end_offset().value(),
           opened->image().topics().size(), opened->image().brokers().size());
  return opened;
}

// Batch by batch, each published (to no listener yet) as it was committed.
Status LocalMetadataLog::replay() {
  auto replayed = for_each_batch(*log_, kReadChunkBytes, [&](const BatchRef& batch) -> Status {
    std::vector<MetadataRecord> records;
    RETURN_IF_ERROR(decode_metadata_batches(batch.bytes, batch.header.base_offset(),
                                            [&](Offset, MetadataRecord r) { records.push_back(std::move(r)); }));
    if (!records.empty()) publish(batch.header.last_offset(), records, 0);
    return ok_status();
  });
  return replayed.ok() ? ok_status() : Status(replayed.error());
}

Result<Offset> LocalMetadataLog::append(const std::vector<MetadataRecord>& records) {
  ASSIGN_OR_RETURN(Bytes batch, encode_metadata_batch(records, clock_.wall_ms()));
  ASSIGN_OR_RETURN(AppendResult appended, log_->append(batch.data(), batch.size(), LeaderEpoch(0)));
  RETURN_IF_ERROR(log_->flush());
  return appended.last_offset;
}

void LocalMetadataLog::propose(uint64_t tag, std::vector<MetadataRecord> records, ProposeDone done) {
  ASSERT(!records.empty());
  Result<Offset> appended = append(records);
  if (appended.ok()) publish(*appended, records, tag);
  done(std::move(appended));
}

Status LocalMetadataLog::shutdown() { return log_->close(); }

}  // namespace samsa

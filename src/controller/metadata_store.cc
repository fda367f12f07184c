#include "controller/metadata_store.h"

#include "base/log.h"
#include "controller/metadata_codec.h"
#include "model/record.h"
#include "model/record_batch.h"
#include "model/record_batch_builder.h"

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

Result<std::unique_ptr<MetadataStore>> MetadataStore::open(FileSystem& files, const std::filesystem::path& metadata_dir,
                                                           Clock& clock) {
  std::filesystem::path dir = metadata_dir / kMetadataPartition.to_string();
  ASSIGN_OR_RETURN(auto log,
                   Log::open(files, dir, kMetadataPartition, metadata_log_config(), clock, RecoveryOptions{}));
  std::unique_ptr<MetadataStore> store(new MetadataStore(std::move(log), clock));
  RETURN_IF_ERROR(store->replay());
  LOG_INFO("metadata", "replayed {} metadata records: {} topics, {} brokers", store->log_->log_end_offset().value(),
           store->image_.topics().size(), store->image_.brokers().size());
  return store;
}

Status MetadataStore::replay() {
  Offset next = log_->log_start_offset();
  while (next < log_->log_end_offset()) {
    ASSIGN_OR_RETURN(ReadResult read, log_->read(next, kReadChunkBytes, log_->log_end_offset(), true));
    if (read.records.size == 0) break;
    ASSIGN_OR_RETURN(Bytes bytes, read_region(read.records));
    BatchIterator batches(bytes);
    while (auto batch = batches.next()) {
      ASSIGN_OR_RETURN(RecordIterator records, RecordIterator::open(batch->bytes));
      Record record;
      while (records.next(record)) {
        Offset offset = record.offset(batch->header);
        if (offset < next) continue;  // the read may start before `next`
        if (!record.value) return Error(ErrorKind::kCorrupt, "metadata record without a value");
        ASSIGN_OR_RETURN(MetadataRecord decoded, decode_metadata_record(*record.value));
        image_.apply(decoded);
        image_.set_applied_offset(offset);
      }
      RETURN_IF_ERROR(records.status());
      next = batch->header.last_offset() + 1;
    }
  }
  return ok_status();
}

Status MetadataStore::commit(const std::vector<MetadataRecord>& records) {
  if (records.empty()) return ok_status();
  RecordBatchBuilder builder;
  std::vector<Bytes> values;
  values.reserve(records.size());
  int64_t now = clock_.wall_ms();
  for (const auto& r : records) {
    values.push_back(encode_metadata_record(r));
    builder.add(now, std::nullopt, ByteView(values.back()));
  }
  ASSIGN_OR_RETURN(Bytes batch, builder.build());
  ASSIGN_OR_RETURN(AppendResult appended, log_->append(batch.data(), batch.size(), LeaderEpoch(0)));
  RETURN_IF_ERROR(log_->flush());
  for (const auto& r : records) image_.apply(r);
  image_.set_applied_offset(appended.last_offset);
  return ok_status();
}

Status MetadataStore::close() { return log_->close(); }

}  // namespace samsa

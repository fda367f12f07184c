#include "controller/observer_metadata_log.h"

#include "base/assert.h"
#include "base/log.h"
#include "controller/metadata_codec.h"

namespace samsa {

Result<std::unique_ptr<ObserverMetadataLog>> ObserverMetadataLog::open(Runtime& runtime,
                                                                       const std::filesystem::path& dir,
                                                                       RaftFetchTransport& transport,
                                                                       ObserverMetadataLogOptions options) {
  ASSERT(options.snapshot_every_entries > 0);
  std::unique_ptr<ObserverMetadataLog> log(new ObserverMetadataLog(runtime, options));
  ASSIGN_OR_RETURN(log->storage_, RaftLogStorage::open(runtime.files(), dir, runtime.clock()));
  ASSIGN_OR_RETURN(log->driver_,
                   RaftObserverDriver::start(runtime, *log->storage_, transport, *log, options.driver));
  LOG_INFO("metadata", "node {}: observing the metadata quorum from index {}: {} topics, {} brokers",
           options.driver.observer.id.value(), log->applied_.value(), log->image().topics().size(),
           log->image().brokers().size());
  return log;
}

ObserverMetadataLog::~ObserverMetadataLog() { *alive_ = false; }

void ObserverMetadataLog::receive(const raft::FetchResponse& response) { driver_->receive(response); }

void ObserverMetadataLog::propose(uint64_t, std::vector<MetadataRecord>, ProposeDone done) {
  done(not_controller("a broker-only node observes the metadata quorum, it never proposes"));
}

void ObserverMetadataLog::restore(const raft::Snapshot& snapshot) {
  Result<std::vector<MetadataRecord>> records = decode_metadata_batch(snapshot.data);
  ASSERT_MSG(records.ok(), "a metadata snapshot whose records do not decode");
  applied_ = snapshot.index;
  snapshot_index_ = snapshot.index;
  publish_snapshot(Offset(snapshot.index.value()), *records);
}

void ObserverMetadataLog::apply(const raft::Entry& entry) {
  applied_ = entry.index;
  if (entry.kind == raft::EntryKind::kNormal && !entry.data.empty()) {
    Result<std::vector<MetadataRecord>> records = decode_metadata_batch(entry.data);
    ASSERT_MSG(records.ok(), "a committed metadata entry whose records do not decode");
    publish(Offset(entry.index.value()), *records, 0);
  }
  if (!compaction_posted_ && applied_ - snapshot_index_ >= options_.snapshot_every_entries) {
    compaction_posted_ = true;  // not from inside the driver's Ready: posted
    runtime_.post([this, alive = alive_] {
      if (*alive) compact_now();
    });
  }
}

void ObserverMetadataLog::compact_now() {
  compaction_posted_ = false;
  if (!driver_ || driver_->failed() || applied_ <= snapshot_index_) return;
  std::optional<Bytes> data = encode_image_snapshot(runtime_.clock().wall_ms());
  if (!data) return;
  ++snapshots_taken_;
  snapshot_index_ = applied_;
  driver_->compact(applied_, std::move(*data));
}

Status ObserverMetadataLog::shutdown() { return storage_->close(); }

}  // namespace samsa

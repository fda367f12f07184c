#include "replication/partition.h"

#include "base/log.h"

namespace samsa {

// Kafka's semantics (replication_types.h), from the Log's cache entries.
std::optional<replication::EpochEndOffset> LogEpochLookup::end_offset_for(LeaderEpoch epoch) const {
  return replication::end_offset_for_epoch(log_.leader_epochs(), epoch, log_.log_end_offset());
}

std::optional<LeaderEpoch> LogEpochLookup::latest_epoch() const {
  const std::vector<EpochEntry>& entries = log_.leader_epochs();
  if (entries.empty()) return std::nullopt;
  return entries.back().epoch;
}

namespace {
replication::ReplicationConfig core_config(NodeId self, const Log& log) {
  replication::ReplicationConfig c;
  c.self = self;
  c.min_insync_replicas = log.config().min_insync_replicas;
  return c;
}

replication::PartitionRegistration registration(const PartitionState& p) {
  return {p.replicas, p.isr, p.leader, p.leader_epoch, PartitionEpoch(p.partition_epoch)};
}
}  // namespace

Partition::Partition(TopicPartition tp, Uuid topic_id, Log& log, NodeId self, std::optional<Offset> high_watermark,
                     Clock& clock)
    : tp_(std::move(tp)),
      topic_id_(topic_id),
      log_(log),
      clock_(clock),
      core_(core_config(self, log), log.log_end_offset(), high_watermark.value_or(Offset(0))) {}

void Partition::update_state(const PartitionState& state) {
  core_.set_min_insync_replicas(std::max(1, log_.config().min_insync_replicas));
  core_.apply(registration(state), LogEpochLookup(log_), clock_.monotonic_ms());
  perform_ready();
}

Result<AppendResult> Partition::append_as_leader(uint8_t* batches, size_t size) {
  ASSERT(is_leader());
  ASSIGN_OR_RETURN(AppendResult result, log_.append(batches, size, core_.leader_epoch()));
  core_.on_local_append(log_.log_end_offset(), clock_.monotonic_ms());
  perform_ready();
  return result;
}

// The Ready contract (replication_core.h), as far as one node needs it.
void Partition::perform_ready() {
  if (!core_.has_ready()) return;
  replication::Ready ready = core_.take_ready();
  if (ready.truncate) {
    Status cut = ready.truncate->fully ? log_.truncate_fully_and_start_at(ready.truncate->offset)
                                       : log_.truncate_to(ready.truncate->offset);
    if (!cut.ok()) LOG_ERROR("replicas", "truncating {} failed: {}", tp_.to_string(), cut.error().to_string());
  }
  // assign_epoch_start: the Log records a new epoch at its first append in
  // it; recording it at election (for followers with later-epoch data after
  // successive elections) comes with follower fetching.
  // high_watermark: LogManager reads it for the checkpoint; nothing waits yet.
  if (ready.alter_partition) {
    LOG_WARN("replicas", "{}: an ISR change was proposed, but no AlterPartition channel exists yet", tp_.to_string());
  }
}

}  // namespace samsa

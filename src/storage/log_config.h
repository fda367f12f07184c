#pragma once
// LogConfig: the typed, per-topic settings of a partition log, with Apache
// Kafka's defaults (topic-level names in comments; broker-level `log.` keys
// give the defaults). Parsing from strings (server.properties, topic configs)
// is done elsewhere; storage only ever sees this struct.

#include <cstdint>
#include <limits>

namespace samsa {

inline constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

enum class TimestampType : int8_t {
  kCreateTime,     // keep the producer's timestamps
  kLogAppendTime,  // the broker stamps each batch with its append time
};

// cleanup.policy: "delete", "compact" or "compact,delete".
struct CleanupPolicy {
  bool delete_segments = true;
  bool compact = false;
  bool operator==(const CleanupPolicy&) const = default;
};

// compression.type: "producer" keeps what the producer sent.
enum class TopicCompression : int8_t { kProducer, kUncompressed, kGzip, kSnappy, kLz4, kZstd };

struct LogConfig {
  int32_t segment_bytes = 1 << 30;                  // segment.bytes (1 GiB)
  int64_t segment_ms = 7LL * 24 * 3600 * 1000;      // segment.ms (7 days)
  int64_t segment_jitter_ms = 0;                    // segment.jitter.ms (not applied yet)
  int32_t segment_index_bytes = 10 * 1024 * 1024;   // segment.index.bytes (10 MiB)
  int32_t index_interval_bytes = 4096;              // index.interval.bytes
  int64_t retention_ms = 7LL * 24 * 3600 * 1000;    // retention.ms; -1 = forever
  int64_t retention_bytes = -1;                     // retention.bytes; -1 = unlimited
  int64_t flush_messages = kInt64Max;               // flush.messages
  int64_t flush_ms = kInt64Max;                     // flush.ms
  int32_t max_message_bytes = 1024 * 1024 + 12;     // max.message.bytes (largest batch)
  TimestampType message_timestamp_type = TimestampType::kCreateTime;  // message.timestamp.type
  int64_t message_timestamp_before_max_ms = kInt64Max;  // message.timestamp.before.max.ms
  int64_t message_timestamp_after_max_ms = kInt64Max;   // message.timestamp.after.max.ms
  CleanupPolicy cleanup_policy;                     // cleanup.policy (delete)
  TopicCompression compression_type = TopicCompression::kProducer;  // compression.type
  bool preallocate = false;                         // preallocate
  int64_t file_delete_delay_ms = 60000;             // file.delete.delay.ms
  int64_t delete_retention_ms = 24LL * 3600 * 1000; // delete.retention.ms (compaction)
  int64_t min_compaction_lag_ms = 0;                // min.compaction.lag.ms
  int64_t max_compaction_lag_ms = kInt64Max;        // max.compaction.lag.ms
  double min_cleanable_dirty_ratio = 0.5;           // min.cleanable.dirty.ratio
  int32_t min_insync_replicas = 1;                  // min.insync.replicas
  bool unclean_leader_election_enable = false;      // unclean.leader.election.enable

  bool operator==(const LogConfig&) const = default;
};

// The segment age that triggers a roll: segment.ms, lowered to
// max.compaction.lag.ms for compacted logs (as Kafka's maxSegmentMs), so
// that a record never waits in the active segment, which the cleaner never
// touches, longer than the lag allows.
inline int64_t effective_segment_ms(const LogConfig& c) {
  if (c.cleanup_policy.compact && c.max_compaction_lag_ms > 0 && c.max_compaction_lag_ms < c.segment_ms) {
    return c.max_compaction_lag_ms;
  }
  return c.segment_ms;
}

}  // namespace samsa

#pragma once
// LogHistory: what clients saw of a set of partitions (produces sent and
// acknowledged, fetches answered, crashes and the logs read back after
// them), and the judgement of that history against Samsa's promises
// (docs/testing.md, "What the broker promises"). The broker simulation feeds
// it as it runs; the chaos suite's recorded histories can be fed the same
// way, so both judge by the same rules.
//
// Every value a client produces is unique (client id and sequence number),
// so a value names one produce attempt: a value at two offsets is a
// duplicate, a value nobody sent is invented data.
//
// The rules, each a violation kind:
// - kInvented: a fetch returned a value no client ever sent.
// - kForeign: a fetch returned a value sent to another partition, or to an
//   earlier incarnation of this topic (deleted, then created again under the
//   same name: a new partition history, keyed "topic-p@N"), where it was
//   known (acknowledged or read). A value whose produce to the old
//   incarnation had no known outcome may land in the new one: Kafka produces
//   by name, so a request processed after the re-creation does.
// - kAboveHighWatermark: a fetch returned a record at or above the high
//   watermark the same response gave.
// - kGap: a fetch's records do not run contiguously from the fetch offset,
//   or a log read back after a crash has a hole (compaction and retention are
//   not in play in the histories this checks).
// - kInconsistent: two different values were seen at one offset (acknowledged
//   or read) within one crash era (see below).
// - kDuplicate: one value at two offsets.
// - kLostAcknowledged: an acknowledged record is missing from the log read
//   back when the promise in force says it must survive.
// - kCorrupt: a fetch served a batch that fails its CRC or framing (a torn
//   write that recovery should have truncated).
// - kWatermarkDecreased: the high watermark a client saw went down without a
//   power loss in between (not judged with set_watermark_may_regress()) (from a power loss until the logs have been read
//   back, no watermark is judged: what survived is not known yet).
// - kListOffsets: ListOffsets answered an earliest offset other than 0 (no
//   retention or deletion of records is in play), or a latest offset (the
//   high watermark) below the floor known when the request was sent: the
//   highest high watermark seen and every acknowledged offset + 1, this era.
//   A latest offset is a high watermark the broker reports: it raises the
//   floor for what is asked afterwards.
// - kReordered: a value sent after another was acknowledged in the same
//   partition was acknowledged at an offset at or below that one (what was
//   acknowledged first in real time must come first in the log; attempts in
//   flight together may land in either order).
//
// Floors are taken when a request is SENT (watermark_floor()): an answer to
// an earlier request may arrive after a later one's, so only what was known
// before a request left bounds its answer.
//
// Durability: a process crash (kill -9) keeps everything the broker wrote
// (the page cache survives), so every acknowledged record must survive it.
// A power loss keeps only what was fsynced: with `flush.messages=1` that is
// every acknowledged record; by default (no fsync per write, like Kafka)
// acknowledged records may be lost, but only as a suffix of each partition
// (what survives has no gap and agrees with what was acknowledged).
// Offsets above what survived are then assigned again, so a power loss
// starts a new "era": what was known above the surviving end is forgotten.
//
// Pure: no I/O, no clock; fed in the order events happened.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "testing/sim_world.h"  // CrashKind

namespace samsa::sim {

struct Violation {
  enum class Kind {
    kInvented,
    kAboveHighWatermark,
    kGap,
    kInconsistent,
    kDuplicate,
    kLostAcknowledged,
    kWatermarkDecreased,
    kCorrupt,
    kForeign,
    kListOffsets,
    kReordered,
    // Topic lifecycle (topic_history.h).
    kTopicLost,
    kDeletedTopicServed,
    // Committed group offsets (group_history.h).
    kGroupOffsetLost,
    kGroupOffsetInvented,
    // On the replicas of a cluster (replica_invariants.h).
    kReplicasDiverge,
    kLeaderWatermarkDecreased,
    kTwoLeadersInEpoch,
    kFencedLeader,
  };
  Kind kind;
  std::string partition;
  std::string detail;
};
const char* to_string(Violation::Kind kind);

struct ReadRecord {
  int64_t offset;
  std::string value;
};

class LogHistory {
 public:
  // `fsync_every_message`: flush.messages=1 is in force, so a power loss
  // must not lose an acknowledged record either.
  explicit LogHistory(bool fsync_every_message) : fsync_every_message_(fsync_every_message) {}
  bool fsync_every_message() const { return fsync_every_message_; }
  // A replicated partition: a freshly elected leader's HW may be below the
  // committed offset until its followers fetch (REPLICATION.md A4's caveat;
  // Kafka serves Fetch with it), so a client may see the HW go down across
  // a leader change: kWatermarkDecreased is not judged. (ReplicaInvariants
  // judges the HW per leader epoch on the replicas instead.)
  void set_watermark_may_regress(bool may) { watermark_may_regress_ = may; }

  // A produce attempt was sent (before its outcome is known).
  void sent(const std::string& partition, const std::vector<std::string>& values);
  // It was acknowledged (acks=1 or all) with this base offset.
  void acknowledged(const std::string& partition, int64_t base_offset, const std::vector<std::string>& values);
  // It was acknowledged, at an offset the client does not know (librdkafka's
  // idempotent producer: a message whose own answer was lost is reported
  // persisted, offset -1, once a later one's answer proves it was written).
  // It must be found in the log: once a read places it, it is an
  // acknowledged offset like any other; a full read without it loses it.
  // No order is judged for it.
  void acknowledged_somewhere(const std::string& partition, const std::vector<std::string>& values);
  // What a high watermark the broker reports must reach, as known now: the
  // highest seen and every acknowledged offset + 1, this era. Take it when a
  // request leaves and hand it back with the answer.
  int64_t watermark_floor(const std::string& partition) const;
  // A fetch (or a full read) answered these records from `fetch_offset`,
  // with this high watermark. `floor_at_send` (watermark_floor() when the
  // fetch was sent) bounds the high watermark from below; without it, the
  // highest one seen so far does.
  void fetched(const std::string& partition, int64_t fetch_offset, int64_t high_watermark,
               const std::vector<ReadRecord>& records, std::optional<int64_t> floor_at_send = std::nullopt);
  // ListOffsets answered the earliest offset (timestamp -2).
  void listed_earliest(const std::string& partition, int64_t offset);
  // ListOffsets answered the latest offset (timestamp -1) for a request sent
  // when watermark_floor() was `floor_at_send`.
  void listed_latest(const std::string& partition, int64_t floor_at_send, int64_t offset);

  // A fetch served bytes that are not a valid batch.
  void corrupt(const std::string& partition, const std::string& detail);

  // Where the events fed next come from (a history file's line number), so
  // that a violation names both sides: what was learnt first and where. 0:
  // not known (the simulator feeds events without one).
  void set_event_source(uint64_t line) { event_line_ = line; }

  // The broker crashed. Then, once it is back, call recovered() for every
  // partition with the whole log read from offset 0, then resumed(). Two
  // crashes before resumed(): the worse one (a power loss) decides.
  void crashed(CrashKind kind);
  void recovered(const std::string& partition, const std::vector<ReadRecord>& log);
  // Every partition has been recovered: the next crash is judged afresh.
  void resumed() { pending_crash_.reset(); }

  const std::vector<Violation>& violations() const { return violations_; }
  bool ok() const { return violations_.empty(); }
  // Counts for the run's summary.
  size_t acknowledged_records() const { return acknowledged_records_; }
  size_t lost_allowed() const { return lost_allowed_; }

 private:
  // How a value came to be known: evidence for a violation's detail.
  struct Source {
    const char* how;            // "acknowledged", "read", "read back whole"
    int64_t fetch_offset = -1;  // a fetch's offset and high watermark
    int64_t high_watermark = -1;
    uint64_t line = 0;          // set_event_source() when it was learnt
  };
  struct Known {
    int64_t offset;
    Source source;
  };
  struct Partition {
    std::map<int64_t, std::string> at_offset;   // known values, this era
    std::unordered_map<std::string, Known> offset_of;  // inverse of at_offset, with how each was learnt
    std::set<int64_t> acknowledged;             // offsets acknowledged, this era
    std::set<std::string> acknowledged_unplaced;  // acknowledged_somewhere(), not read yet
    int64_t high_watermark = 0;                 // highest seen, this era
    int64_t highest_acknowledged = -1;          // this era
    // value -> highest_acknowledged when it was sent, for values sent and
    // not yet acknowledged (kReordered)
    std::unordered_map<std::string, int64_t> acknowledged_floor_at_send;
  };
  void learn(Partition& p, const std::string& name, int64_t offset, const std::string& value, Source source);
  static std::string describe(const Source& source);
  void check_read(Partition& p, const std::string& name, int64_t fetch_offset, int64_t high_watermark,
                  const std::vector<ReadRecord>& records, const Source& source);
  void forget_from(Partition& p, int64_t offset);
  void violation(Violation::Kind kind, const std::string& partition, std::string detail);

  // A power loss that may have lost acknowledged records happened and the
  // logs have not been read back yet: the new era's high watermarks are not
  // known, so none is judged or learned until recovered().
  bool lossy_crash_pending() const {
    return pending_crash_ == CrashKind::kPowerLoss && !fsync_every_message_;
  }
  // Where `value`, read in `name`, was sent; false (and a violation) if
  // nobody sent it there.
  bool check_sent_here(const std::string& name, int64_t offset, const std::string& value);

  bool fsync_every_message_;
  bool watermark_may_regress_ = false;
  uint64_t event_line_ = 0;
  // value -> the partition it was sent to (hashed: looked up for every record read)
  std::unordered_map<std::string, std::string> sent_to_;
  std::map<std::string, Partition> partitions_;
  std::optional<CrashKind> pending_crash_;
  std::vector<Violation> violations_;
  size_t acknowledged_records_ = 0;
  size_t lost_allowed_ = 0;
};

}  // namespace samsa::sim

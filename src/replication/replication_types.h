#pragma once
// The vocabulary of the replication core (replication_core.h): what the
// metadata says about a partition and its brokers, what a follower fetch
// carries, and the answers and proposals the core hands back. Plain values;
// the Kafka names they mirror are given so the rules can be checked against
// Kafka's sources (core/.../cluster/Partition.scala, Replica.scala,
// server/AbstractFetcherThread.scala).
//
// Errors are the core's own enums with Kafka's names: the broker maps them
// to protocol error codes (the core knows no wire format).

#include <cstdint>
#include <optional>
#include <vector>

#include "model/ids.h"

namespace samsa::replication {

enum class Role : uint8_t { kNone, kLeader, kFollower };
const char* to_string(Role role);

// One partition as the metadata image has it (KRaft PartitionRegistration;
// controller/metadata_image.h PartitionState).
struct PartitionRegistration {
  std::vector<NodeId> replicas;  // assignment order; replicas[0] is the preferred leader
  std::vector<NodeId> isr;
  NodeId leader = kNoNode;
  LeaderEpoch leader_epoch{0};
  PartitionEpoch partition_epoch{0};
};

// A broker as the metadata image has it. Only a registered, unfenced broker
// that is not shutting down, fetching with its current broker epoch, may
// join an ISR (Partition.isReplicaIsrEligible; KIP-841, KIP-903).
struct BrokerStatus {
  BrokerEpoch epoch = kNoBrokerEpoch;
  bool fenced = false;
  bool in_controlled_shutdown = false;
};

// (epoch, end offset): an answer of the leader-epoch cache, Kafka's
// OffsetForLeaderEpoch EpochEndOffset and Fetch's DivergingEpoch.
struct EpochEndOffset {
  LeaderEpoch epoch = kNoLeaderEpoch;  // -1: UNDEFINED_EPOCH
  Offset end_offset = kNoOffset;       // -1: UNDEFINED_EPOCH_OFFSET
  bool operator==(const EpochEndOffset&) const = default;
};

// The first offset of a leader epoch (leader-epoch-checkpoint entry).
struct EpochStart {
  LeaderEpoch epoch;
  Offset start_offset;
  bool operator==(const EpochStart&) const = default;
};

// The local log's leader-epoch cache, read only (KIP-101): storage's
// LeaderEpochCache behind the Log in the broker, a map in tests and the
// simulator. The core never writes it; it asks the caller to (Ready).
class LeaderEpochLookup {
 public:
  virtual ~LeaderEpochLookup() = default;
  // LeaderEpochFileCache.endOffsetFor through UnifiedLog.endOffsetForEpoch
  // (end_offset_for_epoch() below computes it): the latest epoch -> (it,
  // log end); an epoch below every entry -> (that epoch, first entry's
  // start); else (the largest epoch <= it, the next entry's start); nullopt
  // (UNDEFINED) for an empty cache or an epoch above the latest.
  virtual std::optional<EpochEndOffset> end_offset_for(LeaderEpoch epoch) const = 0;
  // The newest epoch in the cache; nullopt if empty.
  virtual std::optional<LeaderEpoch> latest_epoch() const = 0;
};

// Kafka's endOffsetFor over cache entries (anything with .epoch and
// .start_offset, strictly increasing in both) and the log end.
template <typename Entries>
std::optional<EpochEndOffset> end_offset_for_epoch(const Entries& entries, LeaderEpoch epoch, Offset log_end) {
  if (entries.empty()) return std::nullopt;
  if (epoch == entries.back().epoch) return EpochEndOffset{epoch, log_end};
  if (epoch > entries.back().epoch) return std::nullopt;
  if (epoch < entries.front().epoch) return EpochEndOffset{epoch, entries.front().start_offset};
  for (size_t i = entries.size() - 1; i-- > 0;) {
    if (entries[i].epoch <= epoch) return EpochEndOffset{entries[i].epoch, entries[i + 1].start_offset};
  }
  return std::nullopt;  // unreachable: entries.front().epoch <= epoch
}

// What a follower's Fetch says about one partition (FetchRequest v15+:
// ReplicaState{ReplicaId, ReplicaEpoch}, FetchOffset, LogStartOffset,
// CurrentLeaderEpoch (KIP-320), LastFetchedEpoch (v12+)).
struct FollowerFetch {
  NodeId replica = kNoNode;
  BrokerEpoch broker_epoch = kNoBrokerEpoch;
  Offset fetch_offset;
  Offset log_start_offset;
  std::optional<LeaderEpoch> current_leader_epoch;
  std::optional<LeaderEpoch> last_fetched_epoch;
};

enum class FetchError : uint8_t {
  kNone,
  kNotLeaderOrFollower,  // not the leader, unknown replica without an epoch, stale broker epoch
  kFencedLeaderEpoch,    // the fetcher's epoch is older than ours
  kUnknownLeaderEpoch,   // the fetcher's epoch is newer, or it is not (yet) a replica
  kOffsetOutOfRange,     // below our log start or above our log end
};
const char* to_string(FetchError error);

// The leader's answer to a follower fetch, before the read.
struct FetchDecision {
  FetchError error = FetchError::kNone;
  // Set: answer with no records and this DivergingEpoch (KIP-320 / the
  // fetch-based truncation of Fetch v12+); the follower truncates.
  std::optional<EpochEndOffset> diverging_epoch;
  Offset high_watermark;  // for the response: the HW before this fetch's update, as Kafka
  Offset log_end_offset;  // read up to here (isolation LOG_END)
  bool serves_records() const { return error == FetchError::kNone && !diverging_epoch; }
};

// Where a follower fetches next (the partition of its Fetch request).
struct FetchPosition {
  NodeId leader = kNoNode;
  LeaderEpoch current_leader_epoch;
  Offset fetch_offset;
  std::optional<LeaderEpoch> last_fetched_epoch;  // nullopt: empty epoch cache
};

enum class ProduceError : uint8_t {
  kNone,
  kNotLeaderOrFollower,
  kNotEnoughReplicas,             // acks=-1, ISR below min.insync.replicas before the append
  kNotEnoughReplicasAfterAppend,  // written, but the ISR is below min.insync.replicas now
};
const char* to_string(ProduceError error);

using ProduceWaitId = uint64_t;  // the caller's name for one acks=-1 wait

struct ProduceCompletion {
  ProduceWaitId id;
  ProduceError error;
  bool operator==(const ProduceCompletion&) const = default;
};

// An ISR member with the broker epoch of its last fetch (-1 unknown):
// AlterPartition v3 NewIsrWithEpochs (Partition.addBrokerEpochToIsr).
struct IsrMember {
  NodeId id;
  BrokerEpoch broker_epoch = kNoBrokerEpoch;
  bool operator==(const IsrMember&) const = default;
};

// An ISR change for the controller (AlterPartition, KIP-497). `id` names the
// proposal: the answer must quote it, and an answer to anything but the
// pending proposal is ignored (Partition.submitAlterPartition).
struct AlterPartitionProposal {
  uint64_t id = 0;
  NodeId leader;
  LeaderEpoch leader_epoch;
  PartitionEpoch partition_epoch;  // the version the proposal is based on
  std::vector<IsrMember> new_isr;
  bool expand = false;  // true: adds one member; false: removes some
};

// The controller's successful answer (AlterPartition response partition).
struct AlterPartitionResult {
  LeaderEpoch leader_epoch;
  PartitionEpoch partition_epoch;
  std::vector<NodeId> isr;
};

// The controller's error answer, grouped as Partition.handleAlterPartitionError
// treats them.
enum class AlterPartitionError : uint8_t {
  kOperationNotAttempted,   // rejected, not applied: back to the committed ISR
  kIneligibleReplica,       // same
  kUnknownTopicOrPartition, // the rest: stay pending until new metadata arrives
  kUnknownTopicId,
  kFencedLeaderEpoch,
  kInvalidUpdateVersion,
  kInvalidRequest,
  kNewLeaderElected,
  kRetriable,               // anything else: send the same proposal again
};

// What the caller must do to the local log as a follower.
struct Truncation {
  Offset offset;
  // false: remove every record >= offset (Log::truncate_to). true: drop the
  // whole log and restart it empty at offset (Log::truncate_fully_and_start_at),
  // when the follower is below the leader's log start.
  bool fully = false;
  bool operator==(const Truncation&) const = default;
};

}  // namespace samsa::replication

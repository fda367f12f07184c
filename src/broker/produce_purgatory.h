#pragma once
// ProducePurgatory: the acks=-1 produces waiting for the ISR (Kafka's
// DelayedProduce purgatory). A produce that appended to at least one
// partition parks its partitions' waits here; each is decided when its
// partition's HW covers the batch (the replication core's completed
// produces: NONE or NOT_ENOUGH_REPLICAS_AFTER_APPEND, NOT_LEADER_OR_FOLLOWER
// if leadership moved) or when the request's timeout passes
// (REQUEST_TIMED_OUT for those still waiting), and the request is answered
// once all of them are.
//
// Limits: one entry per parked produce request, itself bounded by the
// connection's queued.max.requests and, in bytes, queued.max.request.bytes
// (a parked request keeps its frame). Dropped unanswered when the broker
// shuts down, as Kafka drops requests then.
//
// Loop-thread only. Owned by ReplicaManager, before its partitions (which
// hold the waits' callbacks).

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "io/runtime.h"
#include "model/ids.h"
#include "protocol/error_code.h"
#include "replication/replication_types.h"

namespace samsa {

class Partition;

// The error a parked write answers with, as Kafka's DelayedProduce does: an
// outcome (the HW covered it, or the ISR or the leadership changed), or
// none when it timed out (REQUEST_TIMED_OUT).
protocol::ErrorCode produce_wait_error(std::optional<replication::ProduceError> outcome);

struct ProduceWait {
  TopicPartition tp;
  Offset required_offset;  // the batch's last offset + 1
};

class ProducePurgatory {
 public:
  // Per wait, in order: its answer; nullopt: timed out.
  using Outcomes = std::vector<std::optional<replication::ProduceError>>;
  using Done = std::function<void(Outcomes)>;
  // The partition a wait is on (nullptr: gone, e.g. the topic was deleted).
  using PartitionLookup = std::function<Partition*(const TopicPartition&)>;

  explicit ProducePurgatory(PartitionLookup lookup) : lookup_(std::move(lookup)) {}
  ~ProducePurgatory();
  ProducePurgatory(const ProducePurgatory&) = delete;
  ProducePurgatory& operator=(const ProducePurgatory&) = delete;

  void attach(Runtime& runtime) { runtime_ = &runtime; }
  // Calls done once every wait is decided: at once if all are (then nothing
  // is parked), else later, within timeout_ms.
  void park(std::vector<ProduceWait> waits, int64_t timeout_ms, Done done);
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::vector<ProduceWait> waits;
    std::vector<replication::ProduceWaitId> ids;
    Outcomes outcomes;
    std::vector<bool> decided;
    size_t open = 0;
    TimerId timer = 0;
    Done done;
  };
  void decide(uint64_t entry, size_t index, std::optional<replication::ProduceError> outcome);
  void expire(uint64_t entry);

  PartitionLookup lookup_;
  Runtime* runtime_ = nullptr;
  uint64_t next_id_ = 1;
  replication::ProduceWaitId next_wait_id_ = 1;  // unique across partitions
  std::map<uint64_t, Entry> entries_;
};

}  // namespace samsa

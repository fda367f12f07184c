#pragma once
// GroupManager: runs the group coordinator (group/GroupCoordinator) inside
// the broker. It owns the internal topic __consumer_offsets (created on the
// first group request, as Kafka does: offsets.topic.num.partitions
// partitions, cleanup.policy=compact), replays the partitions this broker
// leads into the coordinator (at startup before any request is served, and
// whenever it becomes their leader; it unloads those it stops leading),
// appends the coordinator's records as RecordBatch v2 batches, and drives
// its timers from the broker's runtime.
//
// Loop-thread only. Owned by Broker; start() after the replicas exist,
// stop() before they go.

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "base/result.h"
#include "broker/produce_purgatory.h"
#include "group/group_coordinator.h"
#include "io/runtime.h"
#include "protocol/error_code.h"

namespace samsa {

class Broker;

inline constexpr const char* kOffsetsTopic = "__consumer_offsets";

class GroupManager {
 public:
  explicit GroupManager(Broker& broker);
  ~GroupManager();

  Status start();
  void stop();

  // Every request reaches the coordinator through here; the deadlines it may
  // have added are re-armed right after the current callback (rearm_soon).
  group::GroupCoordinator& coordinator() {
    rearm_soon();
    return *coordinator_;
  }
  int64_t now_ms() const;
  // NONE if this broker coordinates `group_id` now; else NOT_COORDINATOR or
  // COORDINATOR_NOT_AVAILABLE (what the group APIs answer).
  // May create __consumer_offsets (first use).
  protocol::ErrorCode check_coordinator(const std::string& group_id);
  // The node leading the group's partition, or -1.
  int32_t coordinator_node(const std::string& group_id);
  // Coordination moves with the leadership of __consumer_offsets (issue
  // 14 item 6): the partitions this broker now leads are loaded into the
  // coordinator, those it no longer leads unloaded. Called after every
  // change to the local replicas.
  void follow_leadership();
  // Where the coordinator's last append ended (its partition, last offset
  // + 1), taken by the OffsetCommit handler: the commit is answered once the
  // partition's ISR has it (Kafka appends offsets with acks=all), within
  // offsets.commit.timeout.ms.
  std::optional<ProduceWait> take_last_append() { return std::exchange(last_append_, std::nullopt); }
  int64_t commit_timeout_ms() const { return commit_timeout_ms_; }

 private:
  Status ensure_topic();
  bool leads(int32_t partition);  // this broker's replica of it is the leader
  Status load_partition(int32_t partition);
  protocol::ErrorCode append(int32_t partition, const std::vector<group::OffsetsRecord>& records);
  // One timer at the coordinator's next deadline (next_deadline_ms), so a
  // session expires when it runs out rather than on a periodic tick.
  void rearm_soon();
  void rearm();
  void on_deadline_timer();
  void schedule_offsets_expiry();

  Broker& broker_;
  std::unique_ptr<group::GroupCoordinator> coordinator_;
  // Why __consumer_offsets could not be created, last time it was tried:
  // logged when it changes, not on every FindCoordinator retry.
  std::string offsets_topic_refusal_;
  TimerId deadline_timer_ = 0;
  int64_t deadline_timer_at_ms_ = 0;  // when deadline_timer_ (if set) fires
  TimerId rearm_timer_ = 0;           // a 0 ms timer: rearm after the current call
  TimerId offsets_expiry_timer_ = 0;
  // The __consumer_offsets partitions loaded: led by this broker's replica.
  std::set<int32_t> loaded_;
  std::optional<ProduceWait> last_append_;
  int64_t commit_timeout_ms_ = 5000;  // offsets.commit.timeout.ms
};

}  // namespace samsa

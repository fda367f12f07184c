#pragma once
// GroupCoordinator: Kafka's classic group coordinator as a pure state
// machine (docs/groups.md). Inputs are
// decoded requests with the current time; outputs are answers — immediate,
// or later through the callback when a JoinGroup/SyncGroup waits for the
// rebalance — and records handed to the injected AppendFn (one
// __consumer_offsets partition at a time, in Kafka's formats). Time only
// enters as `now_ms` arguments and tick(); member ids come from the
// injected Rng. No I/O, no threads: the broker's GroupManager drives it on
// its event loop; tests drive it with a fake clock.
//
// Callbacks may be invoked from inside any call (including tick()); they
// must not call back into the coordinator.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/rng.h"
#include "group/group.h"
#include "group/offsets_record.h"
#include "protocol/error_code.h"

namespace samsa::group {

struct CoordinatorConfig {
  int32_t min_session_timeout_ms = 6000;
  int32_t max_session_timeout_ms = 1800000;
  int32_t initial_rebalance_delay_ms = 3000;
  int32_t max_size = INT32_MAX;
  int64_t offsets_retention_ms = 7LL * 24 * 3600 * 1000;
  size_t offset_metadata_max_bytes = 4096;
  int32_t offsets_partitions = 50;
  // How long a parked JoinGroup of a brand-new member keeps it alive.
  int64_t new_member_join_timeout_ms = 300000;
};

// Appends records to partition `partition` of __consumer_offsets; returns
// NONE once they are durable per the partition's acks, else the error.
using AppendFn = std::function<protocol::ErrorCode(int32_t partition, const std::vector<OffsetsRecord>& records)>;

struct JoinRequest {
  std::string group_id;
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::string client_id;
  std::string client_host;
  int32_t session_timeout_ms = 0;
  int32_t rebalance_timeout_ms = -1;  // -1 (v0): the session timeout
  std::string protocol_type;
  Protocols protocols;
  bool require_known_member_id = false;  // KIP-394: JoinGroup v4+ without instance id
};

struct SyncRequest {
  std::string group_id;
  int32_t generation = -1;
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::optional<std::string> protocol_type;  // v5+
  std::optional<std::string> protocol_name;  // v5+
  std::map<std::string, Bytes> assignments;
};

struct MemberRef {
  std::string member_id;
  std::optional<std::string> group_instance_id;
};

struct LeaveResult {
  protocol::ErrorCode error = protocol::ErrorCode::kNone;
  std::vector<protocol::ErrorCode> members;  // per MemberRef, in order
};

struct CommitPartition {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  int32_t leader_epoch = -1;
  std::optional<std::string> metadata;
  int64_t commit_timestamp_ms = -1;  // -1: now
};

struct CommitRequest {
  std::string group_id;
  int32_t generation = -1;
  std::string member_id;
  std::optional<std::string> group_instance_id;
  int64_t retention_ms = -1;  // v2-4; -1: the broker's retention
  std::vector<CommitPartition> partitions;
};

// The offsets one commit() appended, waiting for their records to replicate.
struct PendingCommit {
  std::string group_id;
  std::vector<std::pair<TopicPartitionKey, CommittedOffset>> offsets;
};

struct CommitResult {
  std::vector<protocol::ErrorCode> errors;  // one per partition of the request
  PendingCommit pending;                    // empty unless something was appended
};

class GroupCoordinator {
 public:
  GroupCoordinator(CoordinatorConfig config, Rng& rng, AppendFn append);

  const CoordinatorConfig& config() const { return config_; }
  int32_t partition_for(const std::string& group_id) const;

  // Membership.
  void join(const JoinRequest& request, int64_t now_ms, JoinCallback done);
  void sync(const SyncRequest& request, int64_t now_ms, SyncCallback done);
  protocol::ErrorCode heartbeat(const std::string& group_id, const std::string& member_id,
                                const std::optional<std::string>& instance_id, int32_t generation, int64_t now_ms);
  LeaveResult leave(const std::string& group_id, const std::vector<MemberRef>& members, int64_t now_ms);

  // Offsets. commit() appends the offsets and returns one error per
  // partition, in order; the offsets it appended become visible (committed())
  // only through finish_commit, once the records are replicated, as Kafka
  // answers and shows a commit only when its acks=all append completes.
  CommitResult commit(const CommitRequest& request, int64_t now_ms);
  // `replicated`: the records reached the ISR (the offsets become committed);
  // else they are dropped from the pending ones and stay invisible (a later
  // load of the partition sees them if they did reach the log after all).
  void finish_commit(const PendingCommit& pending, bool replicated);
  std::optional<CommittedOffset> committed(const std::string& group_id, const std::string& topic,
                                           int32_t partition) const;
  // Every committed partition of the group (empty for an unknown group).
  std::vector<std::pair<TopicPartitionKey, CommittedOffset>> all_committed(const std::string& group_id) const;
  // OffsetDelete: top-level error, and per-partition errors in order.
  protocol::ErrorCode delete_offsets(const std::string& group_id, const std::vector<TopicPartitionKey>& partitions,
                                     std::vector<protocol::ErrorCode>& partition_errors);

  // Administration.
  protocol::ErrorCode delete_group(const std::string& group_id);
  const Group* find(const std::string& group_id) const;
  const std::map<std::string, Group>& groups() const { return groups_; }

  // Timers: session expiry, join/sync deadlines, pending member ids.
  void tick(int64_t now_ms);
  // The earliest time at which tick() has work: a member's session expiry, a
  // pending (KIP-394) member id's expiry, a join or sync deadline; nullopt
  // when there is none. The driver arms one timer for it (and asks again
  // after every call), so each deadline is acted on when it is reached, not
  // on the next periodic tick. O(members of all groups).
  std::optional<int64_t> next_deadline_ms() const;
  // Offset retention (offsets.retention.minutes); writes tombstones.
  void expire_offsets(int64_t now_ms);

  // Loading __consumer_offsets: feed records in log order, then finish.
  void load(const OffsetsRecord& record);
  void finish_loading(int64_t now_ms);
  // This broker no longer leads __consumer_offsets partition `partition`
  // (Kafka's onResignation): its groups are forgotten here, and their
  // members' parked JoinGroup / SyncGroup get NOT_COORDINATOR, so they find
  // the new coordinator, which loads them from the log.
  void unload_partition(int32_t partition);

 private:
  Group& create_group(const std::string& group_id, int64_t now_ms);
  std::string new_member_id(const std::string& prefix);
  void transition(Group& g, GroupState to, int64_t now_ms);

  void join_new_member(Group& g, const JoinRequest& r, int64_t now_ms, JoinCallback& done);
  void join_known_member(Group& g, const JoinRequest& r, int64_t now_ms, JoinCallback& done);
  void join_static_member(Group& g, const JoinRequest& r, int64_t now_ms, JoinCallback& done);
  void add_member_and_rebalance(Group& g, const std::string& id, const JoinRequest& r, int64_t now_ms,
                                JoinCallback done);
  void update_member(Member& m, const JoinRequest& r, JoinCallback done);
  void prepare_rebalance(Group& g, int64_t now_ms);
  void try_complete_join(Group& g, int64_t now_ms);
  void complete_join(Group& g, int64_t now_ms);
  void on_join_deadline(Group& g, int64_t now_ms);
  void remove_member(Group& g, const std::string& id, int64_t now_ms);
  void after_member_removed(Group& g, int64_t now_ms);
  JoinResult join_answer(const Group& g, const Member& m) const;
  void complete_sync(Group& g, protocol::ErrorCode error, int64_t now_ms);
  // FENCED_INSTANCE_ID / UNKNOWN_MEMBER_ID / NONE.
  protocol::ErrorCode validate_member(const Group& g, const std::string& member_id,
                                      const std::optional<std::string>& instance_id) const;

  protocol::ErrorCode store_group(const Group& g);
  protocol::ErrorCode append(const std::string& group_id, const std::vector<OffsetsRecord>& records);
  protocol::GroupMetadataValue group_value(const Group& g) const;

  CoordinatorConfig config_;
  Rng& rng_;
  AppendFn append_;
  std::map<std::string, Group> groups_;
  std::map<std::string, protocol::GroupMetadataValue> loading_;  // group records while loading
};

}  // namespace samsa::group

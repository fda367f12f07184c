#pragma once
// Group: one classic consumer group's state as the coordinator keeps it —
// members, generation, selected protocol, committed offsets — plus the small
// pure decisions on it (protocol support and selection, join completeness).
// The rebalance logic that moves it between states is GroupCoordinator's.
//
// Plain data owned by GroupCoordinator; single-threaded.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/bytes.h"
#include "protocol/error_code.h"

namespace samsa::group {

enum class GroupState { kEmpty, kPreparingRebalance, kCompletingRebalance, kStable, kDead };
// Kafka's names: "Empty", "PreparingRebalance", ...
const char* state_name(GroupState state);

struct JoinResult {
  protocol::ErrorCode error = protocol::ErrorCode::kNone;
  int32_t generation = -1;
  std::optional<std::string> protocol_type;
  std::optional<std::string> protocol_name;
  std::string leader;
  std::string member_id;
  bool skip_assignment = false;
  struct Member {
    std::string member_id;
    std::optional<std::string> group_instance_id;
    Bytes metadata;
  };
  std::vector<Member> members;  // only for the leader
};
using JoinCallback = std::function<void(const JoinResult&)>;

struct SyncResult {
  protocol::ErrorCode error = protocol::ErrorCode::kNone;
  std::optional<std::string> protocol_type;
  std::optional<std::string> protocol_name;
  Bytes assignment;
};
using SyncCallback = std::function<void(const SyncResult&)>;

using Protocols = std::vector<std::pair<std::string, Bytes>>;  // preference order

struct Member {
  std::string id;
  std::optional<std::string> instance_id;
  std::string client_id;
  std::string client_host;
  int32_t session_timeout_ms = 0;
  int32_t rebalance_timeout_ms = 0;
  std::string protocol_type;
  Protocols protocols;
  Bytes assignment;
  JoinCallback awaiting_join;  // set while its JoinGroup is parked
  SyncCallback awaiting_sync;  // set while its SyncGroup is parked
  bool is_new = false;
  int64_t deadline_ms = 0;  // session expiry

  const Bytes* metadata_for(const std::string& protocol) const;
};

struct CommittedOffset {
  int64_t offset = -1;
  int32_t leader_epoch = -1;
  std::string metadata;
  int64_t commit_timestamp_ms = 0;
  int64_t expire_timestamp_ms = -1;  // -1: by the retention rule

  bool operator==(const CommittedOffset&) const = default;
};

using TopicPartitionKey = std::pair<std::string, int32_t>;

struct Group {
  std::string id;
  GroupState state = GroupState::kEmpty;
  int32_t generation = 0;
  std::optional<std::string> protocol_type;  // nullopt: a simple (commit-only) group
  std::optional<std::string> protocol_name;
  std::optional<std::string> leader;
  std::map<std::string, Member> members;
  std::map<std::string, std::string> static_members;  // instance id -> member id
  std::map<std::string, int64_t> pending_members;     // KIP-394 id -> expiry
  std::set<std::string> pending_sync;
  int64_t state_timestamp_ms = -1;
  // Join phase: deadline of the rebalance (or initial-delay step).
  int64_t join_deadline_ms = -1;
  bool initial_delay = false;          // waiting out group.initial.rebalance.delay.ms
  int64_t initial_delay_limit_ms = -1;  // the rebalance timeout bounds the chain
  bool new_member_added = false;
  int64_t sync_deadline_ms = -1;
  std::map<TopicPartitionKey, CommittedOffset> offsets;
  // Commits appended to __consumer_offsets but not yet replicated to its ISR
  // (Kafka's pendingOffsetCommits): OffsetFetch does not see them, and they
  // keep the group from expiring, until GroupCoordinator::finish_commit.
  std::map<TopicPartitionKey, CommittedOffset> pending_offsets;

  bool is(GroupState s) const { return state == s; }
  int32_t rebalance_timeout_ms() const;
  size_t awaiting_join_count() const;
  bool all_joined() const;
  // Every member supports one of `protocols` (and the protocol type matches).
  bool supports(const std::string& type, const Protocols& protocols) const;
  // Kafka's vote: candidates supported by all; each member votes its first.
  std::optional<std::string> select_protocol() const;
  // Topics named in members' consumer subscriptions; nullopt if unknown.
  std::optional<std::set<std::string>> subscribed_topics() const;
};

}  // namespace samsa::group

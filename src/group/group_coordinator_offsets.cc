// Committed offsets, group deletion, offset expiry and loading from
// __consumer_offsets (GROUPS.md 2, 3.3). Membership is in group_coordinator.cc.
#include "group/group_coordinator.h"

#include <set>

#include "base/log.h"

namespace samsa::group {

using protocol::ErrorCode;

namespace {

// GMM.scala maybeConvertOffsetCommitError / storeGroup.
ErrorCode map_append_error(ErrorCode e, bool for_commit) {
  switch (e) {
    case ErrorCode::kNone: return e;
    case ErrorCode::kUnknownTopicOrPartition:
    case ErrorCode::kNotEnoughReplicas:
    case ErrorCode::kNotEnoughReplicasAfterAppend: return ErrorCode::kCoordinatorNotAvailable;
    case ErrorCode::kNotLeaderOrFollower:
    case ErrorCode::kKafkaStorageError: return ErrorCode::kNotCoordinator;
    case ErrorCode::kRequestTimedOut: return for_commit ? e : ErrorCode::kRebalanceInProgress;
    case ErrorCode::kMessageTooLarge:
    case ErrorCode::kRecordListTooLarge:
    case ErrorCode::kInvalidFetchSize:
      return for_commit ? ErrorCode::kInvalidCommitOffsetSize : ErrorCode::kUnknownServerError;
    default: return e;
  }
}

OffsetsRecord offset_tombstone(const std::string& group, const TopicPartitionKey& tp) {
  return OffsetRecord{OffsetKey{group, tp.first, tp.second}, std::nullopt};
}

}  // namespace

ErrorCode GroupCoordinator::append(const std::string& group_id, const std::vector<OffsetsRecord>& records) {
  if (records.empty()) return ErrorCode::kNone;
  return append_(partition_for(group_id), records);
}

protocol::GroupMetadataValue GroupCoordinator::group_value(const Group& g) const {
  protocol::GroupMetadataValue v;
  v.protocol_type = g.protocol_type.value_or("");
  v.generation = g.generation;
  v.protocol = g.protocol_name;
  v.leader = g.leader;
  v.current_state_timestamp = g.state_timestamp_ms;
  for (const auto& [id, m] : g.members) {
    protocol::GroupMetadataValue::MemberMetadata mm;
    mm.member_id = id;
    mm.group_instance_id = m.instance_id;
    mm.client_id = m.client_id;
    mm.client_host = m.client_host;
    mm.rebalance_timeout = m.rebalance_timeout_ms;
    mm.session_timeout = m.session_timeout_ms;
    const Bytes* metadata = g.protocol_name ? m.metadata_for(*g.protocol_name) : nullptr;
    if (metadata) mm.subscription = *metadata;
    mm.assignment = m.assignment;
    v.members.push_back(std::move(mm));
  }
  return v;
}

ErrorCode GroupCoordinator::store_group(const Group& g) {
  return map_append_error(append(g.id, {GroupRecord{GroupKey{g.id}, group_value(g)}}), false);
}

// ---- OffsetCommit ----

CommitResult GroupCoordinator::commit(const CommitRequest& r, int64_t now_ms) {
  auto all = [&](ErrorCode e) { return CommitResult{std::vector<ErrorCode>(r.partitions.size(), e), {}}; };
  auto it = groups_.find(r.group_id);
  if (it == groups_.end()) {
    if (r.generation >= 0) return all(ErrorCode::kIllegalGeneration);
    it = groups_.find(create_group(r.group_id, now_ms).id);  // a simple group
  }
  Group& g = it->second;
  if (g.is(GroupState::kDead)) return all(ErrorCode::kCoordinatorNotAvailable);
  bool admin = r.generation < 0 && r.member_id.empty() && !r.group_instance_id;
  if (admin) {
    if (!g.is(GroupState::kEmpty)) return all(ErrorCode::kUnknownMemberId);
  } else {
    ErrorCode valid = validate_member(g, r.member_id, r.group_instance_id);
    if (valid != ErrorCode::kNone) return all(valid);
    if (r.generation != g.generation) return all(ErrorCode::kIllegalGeneration);
    if (g.is(GroupState::kCompletingRebalance)) return all(ErrorCode::kRebalanceInProgress);
    if (g.is(GroupState::kEmpty)) return all(ErrorCode::kUnknownMemberId);
    Member& m = g.members.at(r.member_id);
    m.deadline_ms = now_ms + m.session_timeout_ms;
  }
  CommitResult result{std::vector<ErrorCode>(r.partitions.size(), ErrorCode::kNone), {r.group_id, {}}};
  std::vector<ErrorCode>& errors = result.errors;
  std::vector<OffsetsRecord> records;
  auto& staged = result.pending.offsets;
  for (size_t i = 0; i < r.partitions.size(); ++i) {
    const CommitPartition& p = r.partitions[i];
    std::string metadata = p.metadata.value_or("");
    if (metadata.size() > config_.offset_metadata_max_bytes) {
      errors[i] = ErrorCode::kOffsetMetadataTooLarge;
      continue;
    }
    CommittedOffset c;
    c.offset = p.offset;
    c.leader_epoch = p.leader_epoch;
    c.metadata = std::move(metadata);
    c.commit_timestamp_ms = p.commit_timestamp_ms >= 0 ? p.commit_timestamp_ms : now_ms;
    c.expire_timestamp_ms = r.retention_ms >= 0 ? now_ms + r.retention_ms : -1;
    protocol::OffsetCommitValue v;
    v.offset = c.offset;
    v.leader_epoch = c.leader_epoch;
    v.metadata = c.metadata;
    v.commit_timestamp = c.commit_timestamp_ms;
    v.expire_timestamp = c.expire_timestamp_ms;
    records.push_back(OffsetRecord{OffsetKey{r.group_id, p.topic, p.partition}, std::move(v)});
    staged.push_back({{p.topic, p.partition}, std::move(c)});
  }
  ErrorCode appended = map_append_error(append(r.group_id, records), true);
  if (appended != ErrorCode::kNone) {
    for (auto& e : errors) {
      if (e == ErrorCode::kNone) e = appended;
    }
    staged.clear();
    return result;
  }
  for (const auto& [tp, c] : staged) g.pending_offsets[tp] = c;
  return result;
}

void GroupCoordinator::finish_commit(const PendingCommit& pending, bool replicated) {
  auto it = groups_.find(pending.group_id);
  if (it == groups_.end()) return;  // unloaded or deleted meanwhile: the log has the last word
  Group& g = it->second;
  for (const auto& [tp, c] : pending.offsets) {
    auto staged = g.pending_offsets.find(tp);
    // Only the latest commit of a partition is pending; an older one that
    // completes after it must not hide it (their records replicate in order).
    bool latest = staged != g.pending_offsets.end() && staged->second == c;
    if (replicated) g.offsets[tp] = c;
    if (latest) g.pending_offsets.erase(staged);
  }
}

std::optional<CommittedOffset> GroupCoordinator::committed(const std::string& group_id, const std::string& topic,
                                                           int32_t partition) const {
  const Group* g = find(group_id);
  if (!g) return std::nullopt;
  auto it = g->offsets.find({topic, partition});
  if (it == g->offsets.end()) return std::nullopt;
  return it->second;
}

std::vector<std::pair<TopicPartitionKey, CommittedOffset>> GroupCoordinator::all_committed(
    const std::string& group_id) const {
  std::vector<std::pair<TopicPartitionKey, CommittedOffset>> out;
  const Group* g = find(group_id);
  if (!g) return out;
  for (const auto& kv : g->offsets) out.push_back(kv);
  return out;
}

// ---- OffsetDelete and DeleteGroups ----

ErrorCode GroupCoordinator::delete_offsets(const std::string& group_id, const std::vector<TopicPartitionKey>& tps,
                                           std::vector<ErrorCode>& partition_errors) {
  partition_errors.assign(tps.size(), ErrorCode::kNone);
  auto it = groups_.find(group_id);
  if (it == groups_.end() || it->second.is(GroupState::kDead)) return ErrorCode::kGroupIdNotFound;
  Group& g = it->second;
  std::optional<std::set<std::string>> subscribed;
  if (!g.is(GroupState::kEmpty)) {
    if (g.protocol_type != "consumer") return ErrorCode::kNonEmptyGroup;
    subscribed = g.subscribed_topics();
  }
  std::vector<OffsetsRecord> records;
  std::vector<TopicPartitionKey> removed;
  for (size_t i = 0; i < tps.size(); ++i) {
    if (!g.is(GroupState::kEmpty) && (!subscribed || subscribed->count(tps[i].first))) {
      partition_errors[i] = ErrorCode::kGroupSubscribedToTopic;
      continue;
    }
    if (g.offsets.count(tps[i]) || g.pending_offsets.count(tps[i])) {
      records.push_back(offset_tombstone(group_id, tps[i]));
      removed.push_back(tps[i]);
    }
  }
  ErrorCode appended = map_append_error(append(group_id, records), false);
  if (appended != ErrorCode::kNone) return appended;
  for (const auto& tp : removed) {
    g.offsets.erase(tp);
    g.pending_offsets.erase(tp);
  }
  return ErrorCode::kNone;
}

ErrorCode GroupCoordinator::delete_group(const std::string& group_id) {
  auto it = groups_.find(group_id);
  if (it == groups_.end() || it->second.is(GroupState::kDead)) return ErrorCode::kGroupIdNotFound;
  Group& g = it->second;
  if (!g.is(GroupState::kEmpty)) return ErrorCode::kNonEmptyGroup;
  std::vector<OffsetsRecord> records;
  std::set<TopicPartitionKey> committed_or_pending;
  for (const auto& [tp, c] : g.offsets) committed_or_pending.insert(tp);
  for (const auto& [tp, c] : g.pending_offsets) committed_or_pending.insert(tp);
  // A pending commit's record is already in the log: its tombstone must follow.
  for (const auto& tp : committed_or_pending) records.push_back(offset_tombstone(group_id, tp));
  if (g.generation > 0) records.push_back(GroupRecord{GroupKey{group_id}, std::nullopt});
  ErrorCode appended = map_append_error(append(group_id, records), false);
  if (appended != ErrorCode::kNone) return appended;
  g.state = GroupState::kDead;
  groups_.erase(it);
  return ErrorCode::kNone;
}

// ---- Expiry (KIP-211) ----

void GroupCoordinator::expire_offsets(int64_t now_ms) {
  std::vector<std::string> dead;
  for (auto& [group_id, g] : groups_) {
    std::optional<std::set<std::string>> subscribed;
    bool by_commit_time = !g.protocol_type;  // simple group
    if (g.protocol_type && g.is(GroupState::kStable)) {
      subscribed = g.subscribed_topics();
      by_commit_time = subscribed.has_value();
    }
    bool empty_consumer = g.protocol_type && g.is(GroupState::kEmpty);
    std::vector<TopicPartitionKey> expired;
    for (const auto& [tp, c] : g.offsets) {
      bool expire = false;
      if (c.expire_timestamp_ms >= 0) {
        expire = now_ms >= c.expire_timestamp_ms;
      } else if (empty_consumer) {
        int64_t since = g.state_timestamp_ms >= 0 ? g.state_timestamp_ms : c.commit_timestamp_ms;
        expire = now_ms - since >= config_.offsets_retention_ms;
      } else if (by_commit_time && (!subscribed || !subscribed->count(tp.first))) {
        expire = now_ms - c.commit_timestamp_ms >= config_.offsets_retention_ms;
      }
      if (expire) expired.push_back(tp);
    }
    std::vector<OffsetsRecord> records;
    for (const auto& tp : expired) records.push_back(offset_tombstone(group_id, tp));
    bool now_dead = g.is(GroupState::kEmpty) && g.offsets.size() == expired.size() && g.members.empty() &&
                    g.pending_members.empty() && g.pending_offsets.empty() &&
                    (!expired.empty() || g.offsets.empty());
    if (now_dead && g.generation > 0) records.push_back(GroupRecord{GroupKey{group_id}, std::nullopt});
    if (records.empty() && !now_dead) continue;
    if (append(group_id, records) != ErrorCode::kNone) continue;  // retried next cycle
    for (const auto& tp : expired) g.offsets.erase(tp);
    if (!expired.empty()) LOG_INFO("group", "expired {} offsets of group {}", expired.size(), group_id);
    if (now_dead) dead.push_back(group_id);
  }
  for (const auto& id : dead) groups_.erase(id);
}

// ---- Loading ----

void GroupCoordinator::load(const OffsetsRecord& record) {
  if (const auto* o = std::get_if<OffsetRecord>(&record)) {
    Group& g = groups_[o->key.group];
    g.id = o->key.group;
    TopicPartitionKey tp{o->key.topic, o->key.partition};
    if (!o->value) {
      g.offsets.erase(tp);
      return;
    }
    CommittedOffset c;
    c.offset = o->value->offset;
    c.leader_epoch = o->value->leader_epoch;
    c.metadata = o->value->metadata;
    c.commit_timestamp_ms = o->value->commit_timestamp;
    c.expire_timestamp_ms = o->value->expire_timestamp;
    g.offsets[tp] = std::move(c);
    return;
  }
  const auto& gr = std::get<GroupRecord>(record);
  if (gr.value) {
    loading_[gr.key.group] = *gr.value;
  } else {
    loading_.erase(gr.key.group);
    auto it = groups_.find(gr.key.group);
    if (it != groups_.end() && it->second.offsets.empty()) groups_.erase(it);
  }
}

void GroupCoordinator::finish_loading(int64_t now_ms) {
  for (auto& [id, v] : loading_) {
    Group& g = groups_[id];
    g.id = id;
    g.protocol_type = v.protocol_type.empty() ? std::nullopt : std::optional(v.protocol_type);
    g.generation = v.generation;
    g.protocol_name = v.protocol;
    g.leader = v.leader;
    g.state_timestamp_ms = v.current_state_timestamp >= 0 ? v.current_state_timestamp : now_ms;
    g.state = v.members.empty() ? GroupState::kEmpty : GroupState::kStable;
    for (auto& mm : v.members) {
      Member& m = g.members[mm.member_id];
      m.id = mm.member_id;
      m.instance_id = mm.group_instance_id;
      m.client_id = mm.client_id;
      m.client_host = mm.client_host;
      m.session_timeout_ms = mm.session_timeout;
      m.rebalance_timeout_ms = mm.rebalance_timeout < 0 ? mm.session_timeout : mm.rebalance_timeout;
      m.protocol_type = v.protocol_type;
      if (v.protocol) m.protocols = {{*v.protocol, mm.subscription}};
      m.assignment = mm.assignment;
      m.deadline_ms = now_ms + m.session_timeout_ms;
      if (m.instance_id) g.static_members[*m.instance_id] = m.id;
    }
    if (g.members.size() > size_t(config_.max_size)) prepare_rebalance(g, now_ms);
  }
  loading_.clear();
  for (auto it = groups_.begin(); it != groups_.end();) {
    Group& g = it->second;
    if (g.state_timestamp_ms < 0) g.state_timestamp_ms = now_ms;
    // Offsets all deleted and no group record: nothing left of the group.
    bool nothing = g.offsets.empty() && g.members.empty() && !g.protocol_type && g.generation == 0;
    it = nothing ? groups_.erase(it) : std::next(it);
  }
}

}  // namespace samsa::group

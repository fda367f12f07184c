// Membership and rebalancing (GROUPS.md 1.2-1.8). Offsets, deletion and
// loading are in group_coordinator_offsets.cc.
#include "group/group_coordinator.h"

#include <algorithm>

#include "base/log.h"

namespace samsa::group {

using protocol::ErrorCode;

namespace {

JoinResult join_error(ErrorCode error, std::string member_id = "") {
  JoinResult r;
  r.error = error;
  r.member_id = std::move(member_id);
  return r;
}

SyncResult sync_error(ErrorCode error) {
  SyncResult r;
  r.error = error;
  return r;
}

bool same_protocols(const Protocols& a, const Protocols& b) { return a == b; }

}  // namespace

GroupCoordinator::GroupCoordinator(CoordinatorConfig config, Rng& rng, AppendFn append)
    : config_(config), rng_(rng), append_(std::move(append)) {}

int32_t GroupCoordinator::partition_for(const std::string& group_id) const {
  return group::partition_for(group_id, config_.offsets_partitions);
}

const Group* GroupCoordinator::find(const std::string& group_id) const {
  auto it = groups_.find(group_id);
  return it == groups_.end() ? nullptr : &it->second;
}

Group& GroupCoordinator::create_group(const std::string& group_id, int64_t now_ms) {
  Group& g = groups_[group_id];
  g.id = group_id;
  g.state = GroupState::kEmpty;
  g.state_timestamp_ms = now_ms;
  return g;
}

std::string GroupCoordinator::new_member_id(const std::string& prefix) {
  // clientId (or instance id) + "-" + a random UUID, as Kafka.
  uint64_t hi = rng_.next_u64(), lo = rng_.next_u64();
  hi = (hi & ~0xf000ULL) | 0x4000ULL;
  lo = (lo & ~(0xc0ULL << 56)) | (0x80ULL << 56);
  return fmt::format("{}-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", prefix, uint32_t(hi >> 32), uint32_t((hi >> 16) & 0xffff),
                     uint32_t(hi & 0xffff), uint32_t(lo >> 48), lo & 0xffffffffffffULL);
}

void GroupCoordinator::transition(Group& g, GroupState to, int64_t now_ms) {
  g.state = to;
  g.state_timestamp_ms = now_ms;
}

ErrorCode GroupCoordinator::validate_member(const Group& g, const std::string& member_id,
                                            const std::optional<std::string>& instance_id) const {
  if (instance_id) {
    auto it = g.static_members.find(*instance_id);
    if (it != g.static_members.end() && it->second != member_id) return ErrorCode::kFencedInstanceId;
    if (it == g.static_members.end()) return ErrorCode::kUnknownMemberId;
  }
  if (!g.members.count(member_id)) return ErrorCode::kUnknownMemberId;
  return ErrorCode::kNone;
}

// ---- JoinGroup ----

void GroupCoordinator::join(const JoinRequest& r, int64_t now_ms, JoinCallback done) {
  if (r.group_id.empty()) return done(join_error(ErrorCode::kInvalidGroupId, r.member_id));
  if (r.session_timeout_ms < config_.min_session_timeout_ms || r.session_timeout_ms > config_.max_session_timeout_ms) {
    return done(join_error(ErrorCode::kInvalidSessionTimeout, r.member_id));
  }
  auto it = groups_.find(r.group_id);
  if (it == groups_.end()) {
    if (!r.member_id.empty()) return done(join_error(ErrorCode::kUnknownMemberId, r.member_id));
    it = groups_.find(create_group(r.group_id, now_ms).id);
  }
  Group& g = it->second;
  if (g.is(GroupState::kDead)) return done(join_error(ErrorCode::kCoordinatorNotAvailable, r.member_id));
  // KIP-389 capacity.
  bool known = g.members.count(r.member_id) > 0;
  size_t limit = size_t(config_.max_size);
  bool accept = g.is(GroupState::kEmpty) || known ||
                (g.is(GroupState::kPreparingRebalance) ? g.awaiting_join_count() < limit : g.members.size() < limit);
  if (!accept) return done(join_error(ErrorCode::kGroupMaxSizeReached));
  if (!g.supports(r.protocol_type, r.protocols)) {
    return done(join_error(ErrorCode::kInconsistentGroupProtocol, r.member_id));
  }
  if (r.member_id.empty()) {
    join_new_member(g, r, now_ms, done);
  } else {
    join_known_member(g, r, now_ms, done);
  }
  if (g.is(GroupState::kPreparingRebalance)) try_complete_join(g, now_ms);
}

void GroupCoordinator::join_new_member(Group& g, const JoinRequest& r, int64_t now_ms, JoinCallback& done) {
  if (r.group_instance_id) return join_static_member(g, r, now_ms, done);
  std::string id = new_member_id(r.client_id);
  if (r.require_known_member_id) {
    g.pending_members[id] = now_ms + r.session_timeout_ms;
    return done(join_error(ErrorCode::kMemberIdRequired, id));
  }
  add_member_and_rebalance(g, id, r, now_ms, std::move(done));
}

void GroupCoordinator::join_static_member(Group& g, const JoinRequest& r, int64_t now_ms, JoinCallback& done) {
  auto known = g.static_members.find(*r.group_instance_id);
  std::string id = new_member_id(*r.group_instance_id);
  if (known == g.static_members.end()) return add_member_and_rebalance(g, id, r, now_ms, std::move(done));
  // Replace the old member id by a new one; the old id is fenced.
  std::string old_id = known->second;
  std::string leader_before = g.leader.value_or("");
  Member member = std::move(g.members.at(old_id));
  g.members.erase(old_id);
  if (member.awaiting_join) std::exchange(member.awaiting_join, nullptr)(join_error(ErrorCode::kFencedInstanceId, old_id));
  if (member.awaiting_sync) std::exchange(member.awaiting_sync, nullptr)(sync_error(ErrorCode::kFencedInstanceId));
  g.pending_sync.erase(old_id);
  member.id = id;
  known->second = id;
  if (g.leader == old_id) g.leader = id;
  Protocols old_protocols = member.protocols;
  Member& m = g.members[id] = std::move(member);
  m.deadline_ms = now_ms + r.session_timeout_ms;
  if (g.is(GroupState::kStable)) {
    m.protocols = r.protocols;
    if (g.select_protocol() == g.protocol_name) {
      // Same selected protocol: no rebalance (KIP-345). The member keeps its
      // assignment; the old leader id stops a pre-v9 leader from assigning.
      m.client_id = r.client_id;
      m.client_host = r.client_host;
      m.session_timeout_ms = r.session_timeout_ms;
      m.rebalance_timeout_ms = r.rebalance_timeout_ms < 0 ? r.session_timeout_ms : r.rebalance_timeout_ms;
      ErrorCode stored = store_group(g);
      if (stored != ErrorCode::kNone) {
        m.protocols = old_protocols;
        return done(join_error(stored));
      }
      // The leader id from before the replacement: a rejoining leader sees
      // someone else lead, so it does not compute an assignment the stable
      // group would ignore (Kafka does the same for JoinGroup < v9).
      JoinResult answer = join_answer(g, m);
      answer.members.clear();
      answer.leader = leader_before;
      return done(answer);
    }
    m.protocols = old_protocols;
  }
  update_member(m, r, std::move(done));
  if (g.is(GroupState::kStable) || g.is(GroupState::kCompletingRebalance)) prepare_rebalance(g, now_ms);
}

void GroupCoordinator::join_known_member(Group& g, const JoinRequest& r, int64_t now_ms, JoinCallback& done) {
  if (g.pending_members.erase(r.member_id) > 0) {
    return add_member_and_rebalance(g, r.member_id, r, now_ms, std::move(done));
  }
  ErrorCode valid = validate_member(g, r.member_id, r.group_instance_id);
  if (valid != ErrorCode::kNone) return done(join_error(valid, r.member_id));
  Member& m = g.members.at(r.member_id);
  switch (g.state) {
    case GroupState::kPreparingRebalance:
      update_member(m, r, std::move(done));
      return;
    case GroupState::kCompletingRebalance:
      if (same_protocols(m.protocols, r.protocols)) return done(join_answer(g, m));
      update_member(m, r, std::move(done));
      prepare_rebalance(g, now_ms);
      return;
    case GroupState::kStable:
      if (g.leader == m.id || !same_protocols(m.protocols, r.protocols)) {
        update_member(m, r, std::move(done));
        prepare_rebalance(g, now_ms);
        return;
      }
      m.deadline_ms = now_ms + m.session_timeout_ms;
      return done(join_answer(g, m));
    case GroupState::kEmpty:
    case GroupState::kDead:
      return done(join_error(ErrorCode::kUnknownMemberId, r.member_id));
  }
}

void GroupCoordinator::add_member_and_rebalance(Group& g, const std::string& id, const JoinRequest& r,
                                                int64_t now_ms, JoinCallback done) {
  Member& m = g.members[id];
  m.id = id;
  m.instance_id = r.group_instance_id;
  m.client_id = r.client_id;
  m.client_host = r.client_host;
  m.protocol_type = r.protocol_type;
  m.is_new = true;
  m.deadline_ms = now_ms + config_.new_member_join_timeout_ms;
  update_member(m, r, std::move(done));
  if (r.group_instance_id) g.static_members[*r.group_instance_id] = id;
  if (!g.leader) g.leader = id;
  if (g.is(GroupState::kPreparingRebalance) && g.generation == 0) g.new_member_added = true;
  prepare_rebalance(g, now_ms);
}

void GroupCoordinator::update_member(Member& m, const JoinRequest& r, JoinCallback done) {
  m.protocols = r.protocols;
  m.session_timeout_ms = r.session_timeout_ms;
  m.rebalance_timeout_ms = r.rebalance_timeout_ms < 0 ? r.session_timeout_ms : r.rebalance_timeout_ms;
  m.client_id = r.client_id;
  m.client_host = r.client_host;
  // A member re-sending JoinGroup replaces its own parked request.
  if (m.awaiting_join) std::exchange(m.awaiting_join, nullptr)(join_error(ErrorCode::kRebalanceInProgress, m.id));
  m.awaiting_join = std::move(done);
}

void GroupCoordinator::prepare_rebalance(Group& g, int64_t now_ms) {
  if (g.is(GroupState::kPreparingRebalance)) return;
  if (g.is(GroupState::kCompletingRebalance)) complete_sync(g, ErrorCode::kRebalanceInProgress, now_ms);
  int64_t timeout = g.rebalance_timeout_ms();
  if (g.is(GroupState::kEmpty)) {
    // KIP-134: wait for more members before the first assignment.
    int64_t delay = std::min<int64_t>(config_.initial_rebalance_delay_ms, timeout);
    g.initial_delay = true;
    g.join_deadline_ms = now_ms + delay;
    g.initial_delay_limit_ms = now_ms + timeout;
    g.new_member_added = false;
  } else {
    g.initial_delay = false;
    g.join_deadline_ms = now_ms + timeout;
  }
  g.sync_deadline_ms = -1;
  transition(g, GroupState::kPreparingRebalance, now_ms);
  try_complete_join(g, now_ms);  // e.g. the last member just left
}

void GroupCoordinator::try_complete_join(Group& g, int64_t now_ms) {
  if (g.is(GroupState::kPreparingRebalance) && !g.initial_delay && g.all_joined()) complete_join(g, now_ms);
}

void GroupCoordinator::on_join_deadline(Group& g, int64_t now_ms) {
  if (g.initial_delay && g.new_member_added && config_.initial_rebalance_delay_ms > 0 &&
      now_ms < g.initial_delay_limit_ms) {
    g.new_member_added = false;
    g.join_deadline_ms = std::min<int64_t>(now_ms + config_.initial_rebalance_delay_ms, g.initial_delay_limit_ms);
    return;
  }
  g.initial_delay = false;
  complete_join(g, now_ms);
}

void GroupCoordinator::complete_join(Group& g, int64_t now_ms) {
  // Dynamic members that did not rejoin in time are gone; static ones stay.
  std::vector<std::string> gone;
  for (const auto& [id, m] : g.members) {
    if (!m.awaiting_join && !m.instance_id) gone.push_back(id);
  }
  for (const auto& id : gone) {
    g.members.erase(id);
    g.pending_sync.erase(id);
  }
  if (g.leader && (!g.members.count(*g.leader) || !g.members.at(*g.leader).awaiting_join)) {
    g.leader.reset();
    for (const auto& [id, m] : g.members) {
      if (m.awaiting_join) {
        g.leader = id;
        break;
      }
    }
  }
  if (!g.members.empty() && !g.leader) {
    // Only static members that have not rejoined: wait another round.
    g.join_deadline_ms = now_ms + g.rebalance_timeout_ms();
    return;
  }
  g.join_deadline_ms = -1;
  g.generation++;
  if (g.members.empty()) {
    g.protocol_name.reset();
    g.leader.reset();
    transition(g, GroupState::kEmpty, now_ms);
    ErrorCode stored = store_group(g);
    if (stored != ErrorCode::kNone) LOG_WARN("group", "storing empty group {} failed", g.id);
    return;
  }
  g.protocol_type = g.members.begin()->second.protocol_type;
  g.protocol_name = g.select_protocol();
  transition(g, GroupState::kCompletingRebalance, now_ms);
  g.sync_deadline_ms = now_ms + g.rebalance_timeout_ms();
  for (auto& [id, m] : g.members) {
    JoinResult answer = join_answer(g, m);
    m.is_new = false;
    m.deadline_ms = now_ms + m.session_timeout_ms;
    g.pending_sync.insert(id);
    if (m.awaiting_join) std::exchange(m.awaiting_join, nullptr)(answer);
  }
}

JoinResult GroupCoordinator::join_answer(const Group& g, const Member& m) const {
  JoinResult r;
  r.generation = g.generation;
  r.protocol_type = g.protocol_type;
  r.protocol_name = g.protocol_name;
  r.leader = g.leader.value_or("");
  r.member_id = m.id;
  if (g.leader == m.id && g.protocol_name) {
    for (const auto& [id, other] : g.members) {
      const Bytes* metadata = other.metadata_for(*g.protocol_name);
      r.members.push_back({id, other.instance_id, metadata ? *metadata : Bytes{}});
    }
  }
  return r;
}

// ---- SyncGroup ----

void GroupCoordinator::sync(const SyncRequest& r, int64_t now_ms, SyncCallback done) {
  auto it = groups_.find(r.group_id);
  if (it == groups_.end()) return done(sync_error(ErrorCode::kUnknownMemberId));
  Group& g = it->second;
  if (g.is(GroupState::kDead)) return done(sync_error(ErrorCode::kCoordinatorNotAvailable));
  ErrorCode valid = validate_member(g, r.member_id, r.group_instance_id);
  if (valid != ErrorCode::kNone) return done(sync_error(valid));
  if (r.generation != g.generation) return done(sync_error(ErrorCode::kIllegalGeneration));
  if ((r.protocol_type && r.protocol_type != g.protocol_type) ||
      (r.protocol_name && r.protocol_name != g.protocol_name)) {
    return done(sync_error(ErrorCode::kInconsistentGroupProtocol));
  }
  Member& m = g.members.at(r.member_id);
  switch (g.state) {
    case GroupState::kEmpty:
    case GroupState::kDead:
      return done(sync_error(ErrorCode::kUnknownMemberId));
    case GroupState::kPreparingRebalance:
      return done(sync_error(ErrorCode::kRebalanceInProgress));
    case GroupState::kStable: {
      m.deadline_ms = now_ms + m.session_timeout_ms;
      SyncResult answer;
      answer.protocol_type = g.protocol_type;
      answer.protocol_name = g.protocol_name;
      answer.assignment = m.assignment;
      return done(answer);
    }
    case GroupState::kCompletingRebalance:
      break;
  }
  m.awaiting_sync = std::move(done);
  m.deadline_ms = now_ms + m.session_timeout_ms;
  g.pending_sync.erase(r.member_id);
  if (g.leader != r.member_id) return;
  for (auto& [id, member] : g.members) {
    auto a = r.assignments.find(id);
    member.assignment = a == r.assignments.end() ? Bytes{} : a->second;
  }
  ErrorCode stored = store_group(g);
  if (stored != ErrorCode::kNone) {
    for (auto& [id, member] : g.members) member.assignment.clear();
    complete_sync(g, stored, now_ms);
    prepare_rebalance(g, now_ms);
    return;
  }
  transition(g, GroupState::kStable, now_ms);
  g.sync_deadline_ms = -1;
  g.pending_sync.clear();
  complete_sync(g, ErrorCode::kNone, now_ms);
}

// Answers every parked SyncGroup: with its assignment, or with `error`.
void GroupCoordinator::complete_sync(Group& g, ErrorCode error, int64_t now_ms) {
  for (auto& [id, m] : g.members) {
    if (!m.awaiting_sync) continue;
    SyncResult answer;
    answer.error = error;
    if (error == ErrorCode::kNone) {
      answer.protocol_type = g.protocol_type;
      answer.protocol_name = g.protocol_name;
      answer.assignment = m.assignment;
      m.deadline_ms = now_ms + m.session_timeout_ms;
    }
    std::exchange(m.awaiting_sync, nullptr)(answer);
  }
}

// ---- Heartbeat and LeaveGroup ----

ErrorCode GroupCoordinator::heartbeat(const std::string& group_id, const std::string& member_id,
                                      const std::optional<std::string>& instance_id, int32_t generation,
                                      int64_t now_ms) {
  auto it = groups_.find(group_id);
  if (it == groups_.end()) return ErrorCode::kUnknownMemberId;
  Group& g = it->second;
  if (g.is(GroupState::kDead)) return ErrorCode::kCoordinatorNotAvailable;
  ErrorCode valid = validate_member(g, member_id, instance_id);
  if (valid != ErrorCode::kNone) return valid;
  if (generation != g.generation) return ErrorCode::kIllegalGeneration;
  if (g.is(GroupState::kEmpty)) return ErrorCode::kUnknownMemberId;
  Member& m = g.members.at(member_id);
  m.deadline_ms = now_ms + m.session_timeout_ms;
  if (g.is(GroupState::kPreparingRebalance)) return ErrorCode::kRebalanceInProgress;
  return ErrorCode::kNone;
}

LeaveResult GroupCoordinator::leave(const std::string& group_id, const std::vector<MemberRef>& members,
                                    int64_t now_ms) {
  LeaveResult result;
  auto it = groups_.find(group_id);
  if (it == groups_.end()) {
    result.members.assign(members.size(), ErrorCode::kUnknownMemberId);
    return result;
  }
  Group& g = it->second;
  if (g.is(GroupState::kDead)) {
    result.error = ErrorCode::kCoordinatorNotAvailable;
    return result;
  }
  for (const MemberRef& ref : members) {
    std::string id = ref.member_id;
    if (id.empty() && ref.group_instance_id) {
      // Admin removal by instance id (KIP-345).
      auto s = g.static_members.find(*ref.group_instance_id);
      if (s == g.static_members.end()) {
        result.members.push_back(ErrorCode::kUnknownMemberId);
        continue;
      }
      id = s->second;
    } else if (g.pending_members.erase(id) > 0) {
      result.members.push_back(ErrorCode::kNone);
      try_complete_join(g, now_ms);
      continue;
    } else {
      ErrorCode valid = validate_member(g, id, ref.group_instance_id);
      if (valid != ErrorCode::kNone) {
        result.members.push_back(valid);
        continue;
      }
    }
    remove_member(g, id, now_ms);
    result.members.push_back(ErrorCode::kNone);
  }
  return result;
}

void GroupCoordinator::remove_member(Group& g, const std::string& id, int64_t now_ms) {
  auto it = g.members.find(id);
  if (it == g.members.end()) return;
  Member m = std::move(it->second);
  g.members.erase(it);
  if (m.instance_id) g.static_members.erase(*m.instance_id);
  g.pending_sync.erase(id);
  if (m.awaiting_join) m.awaiting_join(join_error(ErrorCode::kUnknownMemberId, id));
  if (m.awaiting_sync) m.awaiting_sync(sync_error(ErrorCode::kUnknownMemberId));
  if (g.leader == id) {
    g.leader.reset();
    if (!g.members.empty()) g.leader = g.members.begin()->first;
  }
  after_member_removed(g, now_ms);
}

void GroupCoordinator::after_member_removed(Group& g, int64_t now_ms) {
  if (g.is(GroupState::kStable) || g.is(GroupState::kCompletingRebalance)) {
    prepare_rebalance(g, now_ms);
  } else if (g.is(GroupState::kPreparingRebalance)) {
    try_complete_join(g, now_ms);
  }
}

// ---- Timers ----

std::optional<int64_t> GroupCoordinator::next_deadline_ms() const {
  std::optional<int64_t> next;
  auto consider = [&next](int64_t deadline) {
    if (!next || deadline < *next) next = deadline;
  };
  // The same conditions tick() acts on.
  for (const auto& [group_id, g] : groups_) {
    for (const auto& [id, expiry] : g.pending_members) consider(expiry);
    for (const auto& [id, m] : g.members) {
      bool parked = !m.is_new && (m.awaiting_join || m.awaiting_sync);
      if (!parked) consider(m.deadline_ms);
    }
    if (g.is(GroupState::kCompletingRebalance) && g.sync_deadline_ms >= 0) consider(g.sync_deadline_ms);
    if (g.is(GroupState::kPreparingRebalance) && g.join_deadline_ms >= 0) consider(g.join_deadline_ms);
  }
  return next;
}

void GroupCoordinator::tick(int64_t now_ms) {
  std::vector<std::string> ids;
  for (const auto& [id, g] : groups_) ids.push_back(id);
  for (const auto& group_id : ids) {
    auto git = groups_.find(group_id);
    if (git == groups_.end()) continue;
    Group& g = git->second;
    for (auto p = g.pending_members.begin(); p != g.pending_members.end();) {
      p = now_ms >= p->second ? g.pending_members.erase(p) : std::next(p);
    }
    std::vector<std::string> expired;
    for (const auto& [id, m] : g.members) {
      bool parked = !m.is_new && (m.awaiting_join || m.awaiting_sync);
      if (!parked && now_ms >= m.deadline_ms) expired.push_back(id);
    }
    for (const auto& id : expired) {
      LOG_INFO("group", "member {} of group {} expired (session timeout)", id, g.id);
      remove_member(g, id, now_ms);
    }
    if (g.is(GroupState::kCompletingRebalance) && g.sync_deadline_ms >= 0 && now_ms >= g.sync_deadline_ms) {
      std::vector<std::string> missing(g.pending_sync.begin(), g.pending_sync.end());
      for (const auto& id : missing) {
        auto m = g.members.find(id);
        if (m == g.members.end()) continue;
        if (m->second.instance_id) g.static_members.erase(*m->second.instance_id);
        g.members.erase(m);
        if (g.leader == id) g.leader = g.members.empty() ? std::nullopt : std::optional(g.members.begin()->first);
      }
      g.pending_sync.clear();
      prepare_rebalance(g, now_ms);
    }
    if (g.is(GroupState::kPreparingRebalance)) {
      if (g.join_deadline_ms >= 0 && now_ms >= g.join_deadline_ms) {
        on_join_deadline(g, now_ms);
      } else {
        try_complete_join(g, now_ms);
      }
    }
  }
}

void GroupCoordinator::unload_partition(int32_t partition) {
  // Answered after the groups are gone: a callback may call back in.
  std::vector<std::function<void()>> answers;
  for (auto it = groups_.begin(); it != groups_.end();) {
    if (partition_for(it->first) != partition) {
      ++it;
      continue;
    }
    for (auto& [id, m] : it->second.members) {
      if (m.awaiting_join) {
        answers.push_back([done = std::move(m.awaiting_join), id = id] {
          done(join_error(ErrorCode::kNotCoordinator, id));
        });
      }
      if (m.awaiting_sync) {
        answers.push_back([done = std::move(m.awaiting_sync)] { done(sync_error(ErrorCode::kNotCoordinator)); });
      }
    }
    it = groups_.erase(it);
  }
  for (auto& answer : answers) answer();
}

}  // namespace samsa::group

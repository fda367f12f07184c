// RaftNode: construction, ticks, message dispatch by term, elections, Ready.
// Replication handlers live in replication.cc.
#include "raft/raft_node.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/assert.h"

namespace samsa::raft {

const char* to_string(Role role) {
  switch (role) {
    case Role::kFollower: return "follower";
    case Role::kPreCandidate: return "precandidate";
    case Role::kCandidate: return "candidate";
    case Role::kLeader: return "leader";
  }
  return "?";
}

RaftNode::RaftNode(RaftConfig config, PersistentState state) : config_(std::move(config)), rng_(config_.seed) {
  ASSERT(config_.heartbeat_ticks > 0 && config_.heartbeat_ticks < config_.election_ticks);
  ASSERT(!config_.voters.empty());
  ASSERT(is_member(config_.id));
  snapshot_ = state.snapshot;
  log_.restore(state.snapshot, std::move(state.entries), state.hard_state.commit);
  // A torn crash can keep entries whose hard-state write was lost; the
  // entries prove we saw that term, and we never voted in it (a vote is
  // only sent after its hard state is synced).
  term_ = std::max(state.hard_state.term, log_.last_term());
  vote_ = term_ == state.hard_state.term ? state.hard_state.vote : kNoNode;
  persisted_hs_ = state.hard_state;
  reset_election_timer();
}

bool RaftNode::is_voter(NodeId id) const {
  return std::find(config_.voters.begin(), config_.voters.end(), id) != config_.voters.end();
}
bool RaftNode::is_voter() const { return is_voter(config_.id); }
bool RaftNode::is_member(NodeId id) const {
  return is_voter(id) ||
         std::find(config_.observers.begin(), config_.observers.end(), id) != config_.observers.end();
}

void RaftNode::reset_election_timer() {
  election_elapsed_ = 0;
  randomized_election_ticks_ = int(rng_.range(config_.election_ticks, 2 * config_.election_ticks - 1));
}

void RaftNode::send(Message m) {
  m.from = config_.id;
  ASSERT(m.to != config_.id);
  msgs_.push_back(std::move(m));
}

void RaftNode::tick() {
  ++election_elapsed_;
  if (role_ == Role::kLeader) {
    if (election_elapsed_ >= config_.election_ticks) {
      election_elapsed_ = 0;
      if (config_.check_quorum && !check_quorum_active()) {
        become_follower(term_, kNoNode);  // lost touch with a majority: stop leading
        return;
      }
    }
    if (++heartbeat_elapsed_ >= config_.heartbeat_ticks) {
      heartbeat_elapsed_ = 0;
      broadcast_heartbeat();
    }
    return;
  }
  if (is_voter() && !resigned_ && election_elapsed_ >= randomized_election_ticks_) campaign();
}

void RaftNode::resign() {
  if (role_ != Role::kLeader) return;
  std::vector<NodeId> successors;
  for (NodeId voter : config_.voters) {
    if (voter != config_.id) successors.push_back(voter);
  }
  // Kafka's preferred successors: the voters whose logs match the most.
  std::stable_sort(successors.begin(), successors.end(), [&](NodeId a, NodeId b) {
    return progress_.at(a).match() > progress_.at(b).match();
  });
  for (NodeId voter : successors) {
    Message m;
    m.type = MessageType::kEndQuorum;
    m.to = voter;
    m.term = term_;
    m.successors = successors;
    send(std::move(m));
  }
  become_follower(term_, kNoNode);
  resigned_ = true;
}

void RaftNode::handle_end_quorum(const Message& m) {
  if (!is_voter() || role_ == Role::kLeader || (leader_ != kNoNode && leader_ != m.from)) return;
  // The lease ends with the resignation: from now on this voter grants votes.
  leader_ = kNoNode;
  auto at = std::find(m.successors.begin(), m.successors.end(), config_.id);
  if (at == m.successors.end()) return;  // not named: the election timeout as usual
  if (at == m.successors.begin()) return campaign();
  // The others stand back by a heartbeat interval per place, so the first
  // normally wins, and the next ones follow if it cannot.
  int wait = config_.heartbeat_ticks * int(at - m.successors.begin());
  randomized_election_ticks_ = std::min(randomized_election_ticks_, election_elapsed_ + wait);
}

void RaftNode::campaign() {
  if (!is_voter() || role_ == Role::kLeader) return;
  start_election(config_.pre_vote);
}

bool RaftNode::check_quorum_active() {
  size_t active = 1;  // ourselves
  for (auto& [id, pr] : progress_) {
    if (is_voter(id) && pr.recent_active()) ++active;
    pr.set_recent_active(false);
  }
  return active >= quorum();
}

void RaftNode::become_follower(Term term, NodeId leader) {
  ASSERT(term >= term_);
  if (term > term_) {
    term_ = term;
    vote_ = kNoNode;
    resigned_ = false;
  }
  role_ = Role::kFollower;
  leader_ = leader;
  progress_.clear();
  votes_.clear();
  reset_election_timer();
}

void RaftNode::start_election(bool pre_vote) {
  if (pre_vote) {
    role_ = Role::kPreCandidate;  // term and vote unchanged: nothing to persist
  } else {
    ++term_;
    vote_ = config_.id;
    role_ = Role::kCandidate;
  }
  leader_ = kNoNode;
  votes_.clear();
  votes_[config_.id] = true;
  reset_election_timer();
  if (votes_.size() >= quorum()) {  // a group of one
    if (pre_vote) {
      start_election(false);
    } else {
      become_leader();
    }
    return;
  }
  for (NodeId voter : config_.voters) {
    if (voter == config_.id) continue;
    Message m;
    m.type = MessageType::kVote;
    m.to = voter;
    m.term = pre_vote ? term_ + 1 : term_;
    m.pre_vote = pre_vote;
    m.log_index = log_.last_index();
    m.log_term = log_.last_term();
    send(std::move(m));
  }
}

void RaftNode::become_leader() {
  ASSERT(role_ == Role::kCandidate && vote_ == config_.id);
  role_ = Role::kLeader;
  leader_ = config_.id;
  votes_.clear();
  progress_.clear();
  auto add = [&](NodeId id) {
    if (id != config_.id) progress_.emplace(id, Progress(log_.last_index() + 1, config_.max_inflight_appends));
  };
  for (NodeId id : config_.voters) add(id);
  for (NodeId id : config_.observers) add(id);
  election_elapsed_ = 0;
  heartbeat_elapsed_ = 0;
  log_.append(Entry{term_, log_.last_index() + 1, EntryKind::kLeaderChange, {}});
  mark_unstable(log_.last_index());
  maybe_commit();
  broadcast_append();
}

void RaftNode::handle_vote(const Message& m) {
  if (!is_voter()) return;  // observers have no vote
  bool can_vote = vote_ == m.from || (vote_ == kNoNode && leader_ == kNoNode) || (m.pre_vote && m.term > term_);
  Message r;
  r.type = MessageType::kVoteResponse;
  r.to = m.from;
  r.pre_vote = m.pre_vote;
  if (can_vote && log_.candidate_up_to_date(m.log_index, m.log_term)) {
    r.term = m.term;
    if (!m.pre_vote) {
      ASSERT(m.term == term_);
      vote_ = m.from;  // persisted (Ready.hard_state) before r is sent
      election_elapsed_ = 0;
    }
  } else {
    r.term = term_;
    r.reject = true;
  }
  send(std::move(r));
}

void RaftNode::handle_vote_response(const Message& m) {
  bool counts = (role_ == Role::kPreCandidate && m.pre_vote) ||
                (role_ == Role::kCandidate && !m.pre_vote && m.term == term_);
  if (!counts || !is_voter(m.from)) return;
  votes_.emplace(m.from, !m.reject);
  size_t granted = 0;
  for (auto& [id, yes] : votes_) granted += yes ? 1 : 0;
  size_t rejected = votes_.size() - granted;
  if (granted >= quorum()) {
    if (role_ == Role::kPreCandidate) {
      start_election(false);
    } else {
      become_leader();
    }
  } else if (rejected >= quorum()) {
    become_follower(term_, kNoNode);
  }
}

void RaftNode::step(const Message& m) {
  ASSERT(m.to == config_.id);
  if (!is_member(m.from)) return;
  bool from_leader = m.type == MessageType::kAppend || m.type == MessageType::kHeartbeat ||
                     m.type == MessageType::kSnapshot;
  if (m.term > term_) {
    if (m.type == MessageType::kVote) {
      // Lease: while we hear from a live leader, a vote request is disruption
      // (a node that was partitioned away), not a sign the leader is gone.
      bool in_lease = config_.check_quorum && leader_ != kNoNode && election_elapsed_ < config_.election_ticks;
      if (in_lease) return;
    }
    bool keeps_term = (m.type == MessageType::kVote && m.pre_vote) ||
                      (m.type == MessageType::kVoteResponse && m.pre_vote && !m.reject);
    if (!keeps_term) become_follower(m.term, from_leader ? m.from : kNoNode);
  } else if (m.term < term_) {
    if (from_leader && (config_.check_quorum || config_.pre_vote)) {
      // Tell a deposed leader about the newer term so it steps down; with
      // pre-vote it may otherwise never hear it.
      Message r = reply(m, MessageType::kAppendResponse);
      r.reject = true;
      send(std::move(r));
    } else if (m.type == MessageType::kVote && m.pre_vote) {
      Message r = reply(m, MessageType::kVoteResponse);
      r.pre_vote = true;
      r.reject = true;
      send(std::move(r));
    }
    return;
  }

  switch (m.type) {
    case MessageType::kVote: handle_vote(m); return;
    case MessageType::kVoteResponse: handle_vote_response(m); return;
    case MessageType::kAppend:
    case MessageType::kHeartbeat:
    case MessageType::kSnapshot:
      ASSERT_MSG(role_ != Role::kLeader, "two leaders in one term");
      if (role_ != Role::kFollower) become_follower(term_, m.from);
      leader_ = m.from;
      election_elapsed_ = 0;
      if (m.type == MessageType::kAppend) handle_append(m);
      if (m.type == MessageType::kHeartbeat) handle_heartbeat(m);
      if (m.type == MessageType::kSnapshot) handle_snapshot(m);
      return;
    case MessageType::kAppendResponse:
      if (role_ == Role::kLeader) handle_append_response(m);
      return;
    case MessageType::kHeartbeatResponse:
      if (role_ == Role::kLeader) handle_heartbeat_response(m);
      return;
    case MessageType::kEndQuorum: handle_end_quorum(m); return;
  }
}

ProposeResult RaftNode::propose(Bytes data) {
  ProposeResult result;
  result.leader_hint = leader_;
  if (role_ != Role::kLeader) return result;
  if (size_t(log_.last_index() - log_.commit()) >= config_.max_uncommitted_entries) return result;
  log_.append(Entry{term_, log_.last_index() + 1, EntryKind::kNormal, std::move(data)});
  mark_unstable(log_.last_index());
  result.accepted = true;
  result.index = log_.last_index();
  result.term = term_;
  maybe_commit();
  broadcast_append();
  return result;
}

void RaftNode::compact(LogIndex index, Bytes data) {
  if (index <= log_.snapshot_index()) return;
  ASSERT(index <= log_.applied());
  ASSERT_MSG(unstable_from_ == kNoIndex && !snapshot_to_persist_, "compact() between Readies only");
  Term term = *log_.term_at(index);
  log_.compact(index);
  snapshot_ = std::make_shared<Snapshot>(Snapshot{index, term, std::move(data)});
  snapshot_to_persist_ = snapshot_;
  snapshot_to_apply_ = false;
}

void RaftNode::mark_unstable(LogIndex from) {
  unstable_from_ = unstable_from_ == kNoIndex ? from : std::min(unstable_from_, from);
}

bool RaftNode::has_ready() const {
  return snapshot_to_persist_ || unstable_from_ != kNoIndex || !msgs_.empty() ||
         log_.commit() > log_.applied() || HardState{term_, vote_, log_.commit()} != persisted_hs_;
}

Ready RaftNode::take_ready() {
  Ready r;
  r.snapshot = std::move(snapshot_to_persist_);
  r.apply_snapshot = snapshot_to_apply_;
  snapshot_to_persist_ = nullptr;
  snapshot_to_apply_ = false;
  if (unstable_from_ != kNoIndex) {
    LogIndex from = std::max(unstable_from_, log_.first_index());
    r.entries = log_.slice(from, log_.last_index(), SIZE_MAX);
    unstable_from_ = kNoIndex;
  }
  HardState hs{term_, vote_, log_.commit()};
  if (hs != persisted_hs_) {
    r.hard_state = hs;
    persisted_hs_ = hs;
  }
  r.messages = std::move(msgs_);
  msgs_.clear();
  if (log_.commit() > log_.applied()) {
    r.committed = log_.slice(log_.applied() + 1, log_.commit(), SIZE_MAX);
    log_.applied_to(log_.commit());
  }
  return r;
}

std::string RaftNode::describe() const {
  return fmt::format("n{} {} t{} vote={} leader={} last={}/t{} commit={} snap={}", config_.id.value(),
                     to_string(role_), term_.value(), vote_.value(), leader_.value(), log_.last_index().value(),
                     log_.last_term().value(), log_.commit().value(), log_.snapshot_index().value());
}

}  // namespace samsa::raft

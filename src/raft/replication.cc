// RaftNode: log replication — the follower side (Append, Heartbeat, Snapshot)
// and the leader side (per-follower Progress, commit by current-term quorum).
#include <algorithm>

#include "base/assert.h"
#include "raft/raft_node.h"

namespace samsa::raft {

Message RaftNode::reply(const Message& m, MessageType type) const {
  Message r;
  r.type = type;
  r.to = m.from;
  r.term = term_;
  return r;
}

void RaftNode::handle_append(const Message& m) {
  Message r = reply(m, MessageType::kAppendResponse);
  if (m.log_index < log_.commit()) {
    // Everything up to our commit already matches the leader's log.
    r.log_index = log_.commit();
  } else if (log_.matches(m.log_index, m.log_term)) {
    LogIndex changed = log_.append_after_match(m.log_index, m.entries);
    if (changed != kNoIndex) mark_unstable(changed);
    LogIndex last_new = m.log_index + int64_t(m.entries.size());
    // Only what we know matches the leader may be marked committed.
    log_.commit_to(std::min(m.commit, last_new));
    r.log_index = last_new;  // acknowledged after Ready persistence (ready.h)
  } else {
    r.reject = true;
    r.log_index = m.log_index;
    r.reject_hint = log_.last_index();
  }
  send(std::move(r));
}

void RaftNode::handle_heartbeat(const Message& m) {
  // The leader sends min(commit, our match): entries we acknowledged, which are durable.
  log_.commit_to(m.commit);
  send(reply(m, MessageType::kHeartbeatResponse));
}

void RaftNode::handle_snapshot(const Message& m) {
  ASSERT(m.snapshot);
  const Snapshot& s = *m.snapshot;
  Message r = reply(m, MessageType::kAppendResponse);
  if (s.index <= log_.commit()) {
    r.log_index = log_.commit();
  } else if (log_.matches(s.index, s.term)) {
    log_.commit_to(s.index);  // we have it all already; keep the suffix
    r.log_index = s.index;
  } else {
    log_.reset_to_snapshot(s.index, s.term);
    snapshot_ = m.snapshot;
    snapshot_to_persist_ = m.snapshot;
    snapshot_to_apply_ = true;
    unstable_from_ = kNoIndex;  // nothing of the old log is kept
    r.log_index = s.index;
  }
  send(std::move(r));
}

bool RaftNode::send_append(NodeId to, bool allow_empty) {
  Progress& pr = progress_.at(to);
  if (pr.paused()) return false;
  LogIndex prev = pr.next() - 1;
  auto prev_term = log_.term_at(prev);
  Message m;
  m.to = to;
  m.term = term_;
  if (!prev_term) {
    // The entries it needs are compacted: send the snapshot instead.
    ASSERT(snapshot_ && prev < log_.snapshot_index());
    m.type = MessageType::kSnapshot;
    m.snapshot = snapshot_;
    pr.become_snapshot(snapshot_->index);
    send(std::move(m));
    return true;
  }
  std::vector<Entry> entries = log_.slice(pr.next(), log_.last_index(), config_.max_entries_per_append);
  if (entries.empty() && !allow_empty) return false;
  m.type = MessageType::kAppend;
  m.log_index = prev;
  m.log_term = *prev_term;
  m.commit = log_.commit();
  LogIndex last = entries.empty() ? prev : entries.back().index;
  bool had_entries = !entries.empty();
  m.entries = std::move(entries);
  send(std::move(m));
  pr.sent_append(last, had_entries);
  return true;
}

// Tell a follower the new commit. While appends to it are in flight, an
// empty append at its match (known to agree) carries it; an append after the
// in-flight ones could overtake them, bounce, and force a needless probe.
void RaftNode::send_commit_update(NodeId to) {
  Progress& pr = progress_.at(to);
  if (pr.state() != Progress::State::kReplicate || pr.next() - 1 == pr.match()) {
    send_append(to, /*allow_empty=*/true);
    return;
  }
  auto term = log_.term_at(pr.match());
  if (!term) return;
  Message m;
  m.type = MessageType::kAppend;
  m.to = to;
  m.term = term_;
  m.log_index = pr.match();
  m.log_term = *term;
  m.commit = log_.commit();
  send(std::move(m));
}

void RaftNode::broadcast_append() {
  for (auto& [id, pr] : progress_) send_append(id, /*allow_empty=*/false);
}

void RaftNode::broadcast_heartbeat() {
  for (auto& [id, pr] : progress_) {
    Message m;
    m.type = MessageType::kHeartbeat;
    m.to = id;
    m.term = term_;
    m.commit = std::min(pr.match(), log_.commit());
    send(std::move(m));
  }
}

bool RaftNode::maybe_commit() {
  std::vector<LogIndex> matches;
  for (NodeId v : config_.voters) {
    matches.push_back(v == config_.id ? log_.last_index() : progress_.at(v).match());
  }
  std::sort(matches.begin(), matches.end(), std::greater<>());
  LogIndex quorum_index = matches[quorum() - 1];
  // Raft §5.4.2: only an entry of the current term commits by counting
  // replicas; earlier entries commit with it (Figure 8).
  if (quorum_index <= log_.commit() || log_.term_at(quorum_index) != term_) return false;
  log_.commit_to(quorum_index);
  return true;
}

void RaftNode::handle_append_response(const Message& m) {
  auto it = progress_.find(m.from);
  if (it == progress_.end()) return;
  Progress& pr = it->second;
  pr.set_recent_active(true);
  if (m.reject) {
    if (pr.maybe_decrease(m.log_index, m.reject_hint)) {
      if (pr.state() == Progress::State::kReplicate) pr.become_probe();
      send_append(m.from, /*allow_empty=*/true);
    }
    return;
  }
  if (!pr.maybe_update(m.log_index)) return;
  if (pr.state() == Progress::State::kProbe) {
    pr.become_replicate();
  } else if (pr.state() == Progress::State::kSnapshot && pr.match() >= pr.pending_snapshot()) {
    pr.become_probe();
    pr.become_replicate();
  }
  if (maybe_commit()) {
    for (auto& [id, p] : progress_) send_commit_update(id);
  }
  while (!pr.paused() && pr.next() <= log_.last_index()) {
    if (!send_append(m.from, /*allow_empty=*/false)) break;
  }
}

void RaftNode::handle_heartbeat_response(const Message& m) {
  auto it = progress_.find(m.from);
  if (it == progress_.end()) return;
  Progress& pr = it->second;
  pr.set_recent_active(true);
  if (pr.match() >= log_.last_index()) return;
  // It is behind: whatever we sent may have been lost. Resend from what it
  // acknowledged (also recovers a full in-flight window of lost appends).
  if (pr.state() == Progress::State::kProbe) {
    pr.unpause();
  } else {
    pr.become_probe();
  }
  send_append(m.from, /*allow_empty=*/true);
}

}  // namespace samsa::raft

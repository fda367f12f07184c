#include "testing/invariant_checker.h"

#include <fmt/format.h>

namespace samsa::sim {

using raft::LogIndex;
using raft::Term;

uint64_t entry_hash(const raft::Entry& e) {
  uint64_t h = 1469598103934665603ULL;
  auto mix = [&](uint64_t x) { h = (h ^ x) * 1099511628211ULL; };
  mix(uint64_t(e.term.value()));
  mix(uint64_t(e.kind));
  for (uint8_t b : e.data) mix(b);
  return h;
}

void InvariantChecker::fail(std::string what) {
  if (failure_.empty()) failure_ = std::move(what);
}

void InvariantChecker::check_node(const SimNode& x, const std::vector<SimNode>& all) {
  if (failed() || !x.up()) return;
  const raft::RaftNode& r = *x.raft;
  if (r.role() == raft::Role::kLeader) {
    auto [it, inserted] = leaders_.emplace(r.term(), x.id);
    if (!inserted && it->second != x.id) {
      return fail(fmt::format("election safety: nodes {} and {} both leaders in term {}", it->second.value(),
                              x.id.value(), r.term().value()));
    }
  }
  auto [it, inserted] = last_commit_.emplace(x.id, r.log().commit());
  if (!inserted) {
    if (r.log().commit() < it->second) {
      return fail(fmt::format("commit index of node {} went back from {} to {}", x.id.value(),
                              it->second.value(), r.log().commit().value()));
    }
    it->second = r.log().commit();
  }
  check_commit(x);
  for (const SimNode& y : all) {
    if (y.id != x.id && y.up()) check_matching(x, y);
  }
  if (r.role() == raft::Role::kLeader) check_leader_completeness(x);
}

void InvariantChecker::check_commit(const SimNode& x) {
  const raft::RaftLog& log = x.raft->log();
  max_commit_ = std::max(max_commit_, log.commit());
  auto snap = committed_.find(log.snapshot_index());
  if (snap != committed_.end() && snap->second.term != log.snapshot_term()) {
    return fail(fmt::format("node {} snapshot at {} has term {}, committed entry has term {}", x.id.value(),
                            log.snapshot_index().value(), log.snapshot_term().value(), snap->second.term.value()));
  }
  for (LogIndex i = log.first_index(); i <= log.commit(); ++i) {
    const raft::Entry& e = log.at(i);
    uint64_t h = entry_hash(e);
    auto [it, inserted] = committed_.emplace(i, Committed{e.term, h, x.raft->term()});
    if (!inserted && (it->second.term != e.term || it->second.hash != h)) {
      return fail(fmt::format("committed entry {} changed on node {}: was term {}, now term {}", i.value(),
                              x.id.value(), it->second.term.value(), e.term.value()));
    }
  }
}

void InvariantChecker::check_matching(const SimNode& x, const SimNode& y) {
  const raft::RaftLog& a = x.raft->log();
  const raft::RaftLog& b = y.raft->log();
  LogIndex lo = std::max(a.first_index(), b.first_index());
  LogIndex hi = std::min(a.last_index(), b.last_index());
  bool anchored = false;
  for (LogIndex i = hi; i >= lo && i > raft::kNoIndex; i = i - 1) {
    const raft::Entry& ea = a.at(i);
    const raft::Entry& eb = b.at(i);
    if (!anchored && ea.term == eb.term) anchored = true;
    if (anchored && (ea.term != eb.term || entry_hash(ea) != entry_hash(eb))) {
      return fail(fmt::format("log matching: nodes {} and {} agree below index {} but differ at {}", x.id.value(),
                              y.id.value(), hi.value(), i.value()));
    }
  }
}

void InvariantChecker::check_leader_completeness(const SimNode& x) {
  const raft::RaftLog& log = x.raft->log();
  Term term = x.raft->term();
  for (auto it = committed_.lower_bound(log.first_index()); it != committed_.end(); ++it) {
    if (it->second.seen_in_term > term) continue;  // committed after this leader's term began
    if (it->first > log.last_index()) {
      return fail(fmt::format("leader completeness: leader {} of term {} lacks committed entry {} (term {})",
                              x.id.value(), term.value(), it->first.value(), it->second.term.value()));
    }
    const raft::Entry& e = log.at(it->first);
    if (e.term != it->second.term || entry_hash(e) != it->second.hash) {
      return fail(fmt::format("leader completeness: leader {} of term {} has a different entry at committed index {}",
                              x.id.value(), term.value(), it->first.value()));
    }
  }
}

void InvariantChecker::on_apply(NodeId node, const raft::Entry& entry, uint64_t state_hash) {
  if (failed()) return;
  LogIndex& applied = last_applied_[node];
  if (entry.index != applied + 1) {
    return fail(fmt::format("node {} applied index {} after {}", node.value(), entry.index.value(), applied.value()));
  }
  applied = entry.index;
  auto c = committed_.find(entry.index);
  if (c != committed_.end() && c->second.hash != entry_hash(entry)) {
    return fail(fmt::format("node {} applied a different entry at committed index {}", node.value(),
                            entry.index.value()));
  }
  auto [it, inserted] = state_after_.emplace(entry.index, state_hash);
  if (!inserted && it->second != state_hash) {
    return fail(fmt::format("state machine of node {} diverged after index {}", node.value(), entry.index.value()));
  }
}

void InvariantChecker::on_snapshot_restore(NodeId node, LogIndex index, uint64_t state_hash) {
  if (failed()) return;
  last_applied_[node] = index;
  if (index == raft::kNoIndex) return;
  auto [it, inserted] = state_after_.emplace(index, state_hash);
  if (!inserted && it->second != state_hash) {
    fail(fmt::format("node {} restored a snapshot at {} that differs from the applied state", node.value(),
                     index.value()));
  }
}

void InvariantChecker::on_restart(NodeId node) { last_commit_.erase(node); }

}  // namespace samsa::sim

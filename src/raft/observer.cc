#include "raft/observer.h"

#include <algorithm>

#include "base/assert.h"
#include "raft/raft_node.h"

namespace samsa::raft {
namespace {

// The last index <= `below` whose term is <= `term`: every entry up to it
// may be shared with an observer whose entry at fetch_index has `term`
// (terms never go down along a log, so the observer's entries there have
// terms <= `term`; Kafka's DivergingEpoch end offset, computed by index).
// Strictly below fetch_index on a mismatch, so each round goes lower.
LogIndex last_shared(const RaftLog& log, LogIndex below, Term term) {
  LogIndex i = std::min(below, log.last_index());
  while (i > log.snapshot_index() && *log.term_at(i) > term) i = i - 1;
  return i;
}

}  // namespace

FetchResponse answer_fetch(const RaftNode& node, const FetchRequest& request, size_t max_entries) {
  FetchResponse r;
  r.from = node.id();
  r.to = request.from;
  r.term = node.term();
  if (node.role() != Role::kLeader) {
    r.outcome = FetchOutcome::kNotLeader;
    r.leader_hint = node.leader();
    return r;
  }
  const RaftLog& log = node.log();
  r.leader_hint = node.id();
  if (request.fetch_index < log.snapshot_index()) {
    ASSERT_MSG(node.snapshot() != nullptr, "a compacted log without its snapshot");
    r.outcome = FetchOutcome::kSnapshot;
    r.snapshot = node.snapshot();
    return r;
  }
  if (!log.matches(request.fetch_index, request.last_fetched_term)) {
    r.outcome = FetchOutcome::kDiverging;
    r.diverging_index = last_shared(log, request.fetch_index - 1, request.last_fetched_term);
    // The shared prefix reaches below our snapshot: only the snapshot helps.
    if (r.diverging_index <= log.snapshot_index() && log.snapshot_index() > kNoIndex) {
      r.outcome = FetchOutcome::kSnapshot;
      r.snapshot = node.snapshot();
    }
    return r;
  }
  r.outcome = FetchOutcome::kEntries;
  r.entries = log.slice(request.fetch_index + 1, log.last_index(), max_entries);
  // Never a commit beyond what the answer lets the observer hold.
  LogIndex reach = r.entries.empty() ? request.fetch_index : r.entries.back().index;
  r.commit = std::min(log.commit(), reach);
  return r;
}

RaftObserver::RaftObserver(ObserverConfig config, PersistentState state) : config_(std::move(config)) {
  ASSERT(!config_.voters.empty());
  ASSERT_MSG(std::find(config_.voters.begin(), config_.voters.end(), config_.id) == config_.voters.end(),
             "an observer is not a voter");
  ASSERT(config_.fetch_idle_ticks > 0 && config_.request_timeout_ticks > 0);
  log_.restore(state.snapshot, std::move(state.entries), state.hard_state.commit);
  term_ = std::max(state.hard_state.term, log_.last_term());
  persisted_hs_ = state.hard_state;
}

void RaftObserver::tick() {
  if (in_flight_) {
    if (++waited_ticks_ >= config_.request_timeout_ticks) {
      // No answer: the voter is down or cut off; someone else may lead.
      in_flight_.reset();
      forget_leader();
      fetch_now_ = true;
    } else {
      return;
    }
  }
  if (fetch_now_ || ++idle_ticks_ >= config_.fetch_idle_ticks) send_fetch();
}

void RaftObserver::send_fetch() {
  FetchRequest req{config_.id, target(), log_.last_index(), log_.last_term()};
  in_flight_ = req;
  to_send_ = req;
  waited_ticks_ = 0;
  idle_ticks_ = 0;
  fetch_now_ = false;
}

NodeId RaftObserver::target() {
  if (leader_ != kNoNode) return leader_;
  NodeId to = config_.voters[next_voter_ % config_.voters.size()];
  ++next_voter_;
  return to;
}

void RaftObserver::forget_leader() { leader_ = kNoNode; }

void RaftObserver::learn(Term term, NodeId leader) {
  if (term > term_) term_ = term;
  bool known = std::find(config_.voters.begin(), config_.voters.end(), leader) != config_.voters.end();
  leader_ = known ? leader : kNoNode;
}

void RaftObserver::step(const FetchResponse& r) {
  // Only the answer to the request in flight counts: a late answer to one
  // we gave up on describes a log we may since have changed.
  if (!in_flight_ || r.from != in_flight_->to || r.to != config_.id) return;
  FetchRequest asked = *in_flight_;
  in_flight_.reset();
  if (r.term < term_) {  // a deposed leader's view: look elsewhere
    forget_leader();
    fetch_now_ = true;
    return;
  }
  switch (r.outcome) {
    case FetchOutcome::kNotLeader:
      term_ = std::max(term_, r.term);
      if (r.leader_hint != kNoNode && r.leader_hint != r.from) learn(r.term, r.leader_hint);
      else forget_leader();
      fetch_now_ = true;
      return;
    case FetchOutcome::kEntries:
      learn(r.term, r.from);
      on_entries(r, asked);
      return;
    case FetchOutcome::kDiverging:
      learn(r.term, r.from);
      on_diverging(r, asked);
      return;
    case FetchOutcome::kSnapshot:
      learn(r.term, r.from);
      on_snapshot(r);
      return;
  }
}

void RaftObserver::on_entries(const FetchResponse& r, const FetchRequest& asked) {
  // Our log may have moved since we asked only through this core, and only
  // one request is ever in flight, so the answer fits what we asked.
  ASSERT(log_.last_index() == asked.fetch_index);
  LogIndex changed = log_.append_after_match(asked.fetch_index, r.entries);
  if (changed != kNoIndex) mark_unstable(changed);
  log_.commit_to(std::min(r.commit, log_.last_index()));
  fetch_now_ = !r.entries.empty();
}

void RaftObserver::on_diverging(const FetchResponse& r, const FetchRequest& asked) {
  // The leader holds every committed entry (leader completeness), so the
  // shared prefix reaches at least our commit; a smaller answer is a bug.
  LogIndex keep = std::max(r.diverging_index, log_.snapshot_index());
  ASSERT_MSG(keep >= log_.commit() && keep < asked.fetch_index, "a divergence below the commit");
  log_.truncate_after(keep);
  truncate_after_ = truncate_after_ ? std::min(*truncate_after_, keep) : keep;
  if (unstable_from_ != kNoIndex && unstable_from_ > keep) unstable_from_ = kNoIndex;
  fetch_now_ = true;
}

void RaftObserver::on_snapshot(const FetchResponse& r) {
  ASSERT(r.snapshot != nullptr);
  if (r.snapshot->index <= log_.commit()) {  // we already have all of it
    fetch_now_ = true;
    return;
  }
  log_.reset_to_snapshot(r.snapshot->index, r.snapshot->term);
  snapshot_to_persist_ = r.snapshot;
  snapshot_to_apply_ = true;
  truncate_after_.reset();  // the snapshot replaces every stored entry (ready.h)
  unstable_from_ = kNoIndex;
  fetch_now_ = true;
}

void RaftObserver::compact(LogIndex index, Bytes data) {
  if (index <= log_.snapshot_index()) return;
  ASSERT_MSG(index <= log_.applied(), "compacting past what the state machine applied");
  Term term = *log_.term_at(index);
  log_.compact(index);
  snapshot_to_persist_ = std::make_shared<Snapshot>(Snapshot{index, term, std::move(data)});
}

void RaftObserver::mark_unstable(LogIndex from) {
  if (unstable_from_ == kNoIndex || from < unstable_from_) unstable_from_ = from;
}

bool RaftObserver::has_ready() const {
  return to_send_ || snapshot_to_persist_ || snapshot_to_apply_ || truncate_after_ || unstable_from_ != kNoIndex ||
         log_.commit() > log_.applied() || HardState{term_, kNoNode, log_.commit()} != persisted_hs_;
}

ObserverReady RaftObserver::take_ready() {
  ObserverReady r;
  r.snapshot = std::move(snapshot_to_persist_);
  snapshot_to_persist_ = nullptr;
  r.apply_snapshot = snapshot_to_apply_;
  snapshot_to_apply_ = false;
  r.truncate_after = truncate_after_;
  truncate_after_.reset();
  if (unstable_from_ != kNoIndex) {
    r.entries = log_.slice(std::max(unstable_from_, log_.first_index()), log_.last_index(), SIZE_MAX);
    unstable_from_ = kNoIndex;
  }
  HardState hs{term_, kNoNode, log_.commit()};
  if (hs != persisted_hs_) {
    r.hard_state = hs;
    persisted_hs_ = hs;
  }
  r.fetch = to_send_;
  to_send_.reset();
  if (log_.commit() > log_.applied()) {
    r.committed = log_.slice(log_.applied() + 1, log_.commit(), SIZE_MAX);
    log_.applied_to(log_.commit());
  }
  return r;
}

}  // namespace samsa::raft

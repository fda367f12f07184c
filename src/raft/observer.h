#pragma once
// RaftObserver: a non-voting member that PULLS the log from the quorum's
// leader (KRaft's broker-only node, process.roles=broker), as a pure,
// deterministic state machine beside RaftNode.
//
// Why a second core: RaftNode's leader pushes to the members it knows
// (config.observers), which needs a connection from the leader to each of
// them; a broker-only node has no controller listener to push to (Kafka's
// rule: its controller.listener.names are not in its `listeners`). So it
// asks, as KRaft's brokers do with Fetch: "after (index, term) of my log,
// what comes?" The leader answers from its RaftNode (answer_fetch, below):
// entries and its commit index, or where our log diverges, or "take my
// snapshot", or "I am not the leader, ask N".
//
// Inputs: tick(), step(FetchResponse). Output: take_ready(), performed as
// ready.h says (persist + fsync, then send, then apply). It never votes,
// never counts for commit and never leads. Same inputs => same outputs.
//
// Threading: not thread-safe; one owner calls everything in sequence.

#include <optional>
#include <vector>

#include "raft/raft_log.h"
#include "raft/types.h"

namespace samsa::raft {

class RaftNode;

// "I have everything up to (fetch_index, last_fetched_term)": KRaft's
// FetchOffset (= our last index, its end offset) and LastFetchedEpoch.
struct FetchRequest {
  NodeId from = kNoNode;  // the observer
  NodeId to = kNoNode;    // the voter it thinks leads
  LogIndex fetch_index;
  Term last_fetched_term;
};

enum class FetchOutcome : uint8_t {
  kEntries,         // entries after fetch_index (maybe none) and the commit
  kDiverging,       // our log differs after diverging_index: truncate, ask again
  kSnapshot,        // fetch_index is compacted away: here is the snapshot
  kNotLeader,       // ask leader_hint (kNoNode: unknown) instead
};

struct FetchResponse {
  FetchOutcome outcome = FetchOutcome::kNotLeader;
  NodeId from = kNoNode;
  NodeId to = kNoNode;
  Term term;                    // the answering voter's term
  NodeId leader_hint = kNoNode; // kNotLeader: the leader it knows of
  LogIndex commit;              // kEntries: the leader's commit (KRaft's high watermark)
  std::vector<Entry> entries;   // kEntries: contiguous, from fetch_index + 1
  LogIndex diverging_index;     // kDiverging: the last index both logs may share
  SnapshotPtr snapshot;         // kSnapshot
};

// The leader's side: what `node` answers to `request` (pure; reads its log).
// A node that is not the leader says kNotLeader with the leader it knows.
FetchResponse answer_fetch(const RaftNode& node, const FetchRequest& request, size_t max_entries);

struct ObserverConfig {
  NodeId id;
  std::vector<NodeId> voters;  // who may lead: asked in turn while no leader is known
  int fetch_idle_ticks = 1;     // caught up: ask again after this many ticks (KRaft long-polls)
  int request_timeout_ticks = 10;  // no answer: give up on it, try the next voter
};

// What the caller performs, in this order: persist (snapshot, then drop
// stored entries after truncate_after, then entries as ready.h says, then
// hard_state; fsync); then send `fetch`; then apply (apply_snapshot, then
// `committed`).
struct ObserverReady {
  SnapshotPtr snapshot;
  std::optional<LogIndex> truncate_after;
  std::vector<Entry> entries;
  std::optional<HardState> hard_state;  // term = the leader's, vote = none, commit
  std::optional<FetchRequest> fetch;
  bool apply_snapshot = false;
  std::vector<Entry> committed;

  bool empty() const {
    return !snapshot && !truncate_after && entries.empty() && !hard_state && !fetch && committed.empty();
  }
};

class RaftObserver {
 public:
  // `state` is what the observer's disk held (empty on first start).
  RaftObserver(ObserverConfig config, PersistentState state);

  void tick();
  void step(const FetchResponse& response);
  // The state machine has applied everything <= index and `data` is its
  // snapshot: forget the log up to index (a local compaction, persisted by
  // the next Ready). Call between Readies.
  void compact(LogIndex index, Bytes data);

  bool has_ready() const;
  ObserverReady take_ready();

  NodeId id() const { return config_.id; }
  NodeId leader() const { return leader_; }
  Term term() const { return term_; }
  const RaftLog& log() const { return log_; }
  // The request in flight (for tests and traces).
  const std::optional<FetchRequest>& in_flight() const { return in_flight_; }

 private:
  void send_fetch();
  NodeId target();
  void forget_leader();
  void learn(Term term, NodeId leader);
  void on_entries(const FetchResponse& r, const FetchRequest& asked);
  void on_diverging(const FetchResponse& r, const FetchRequest& asked);
  void on_snapshot(const FetchResponse& r);
  void mark_unstable(LogIndex from);

  ObserverConfig config_;
  RaftLog log_;
  Term term_;
  NodeId leader_ = kNoNode;
  size_t next_voter_ = 0;  // round robin while no leader is known
  std::optional<FetchRequest> in_flight_;
  int waited_ticks_ = 0;      // since the request in flight was sent
  int idle_ticks_ = 0;        // since the last answer, when none is in flight
  bool fetch_now_ = true;     // the last answer brought something: ask at once

  // Output not yet handed out.
  std::optional<FetchRequest> to_send_;
  LogIndex unstable_from_;
  std::optional<LogIndex> truncate_after_;
  SnapshotPtr snapshot_to_persist_;
  bool snapshot_to_apply_ = false;
  HardState persisted_hs_;
};

}  // namespace samsa::raft

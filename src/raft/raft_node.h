#pragma once
// RaftNode: one member of a Raft group as a pure, deterministic state machine.
//
// Inputs: tick() (logical time), step(Message), propose(data), compact(...).
// Output: take_ready() returns the batch of work (ready.h states the order the
// caller must follow: persist + fsync, then send, then apply). No sockets,
// files, threads or clocks; the only randomness is the election jitter drawn
// from an Rng seeded by RaftConfig::seed. Same inputs => same outputs.
//
// Threading: not thread-safe; one owner calls everything in sequence, and
// performs each Ready completely before the next input.
//
// Protocol: Raft (Ongaro & Ousterhout) with pre-vote (KIP-996) and check-quorum
// (KAFKA-15489); static membership of voters and observers. A new leader
// appends a kLeaderChange entry so entries of earlier terms can commit.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/rng.h"
#include "raft/config.h"
#include "raft/message.h"
#include "raft/progress.h"
#include "raft/raft_log.h"
#include "raft/ready.h"

namespace samsa::raft {

enum class Role { kFollower, kPreCandidate, kCandidate, kLeader };
const char* to_string(Role role);

struct ProposeResult {
  bool accepted = false;
  LogIndex index;             // where the entry was appended (if accepted)
  Term term;                  // and in which term
  NodeId leader_hint = kNoNode;  // who to ask instead (if not accepted)
};

class RaftNode {
 public:
  // `state` is what the node's disk held (empty on first start).
  RaftNode(RaftConfig config, PersistentState state);

  void tick();
  void step(const Message& m);
  ProposeResult propose(Bytes data);
  // Start an election now (through pre-vote if enabled). For tests and
  // operator-triggered elections; observers ignore it.
  void campaign();
  // Graceful shutdown of the leader (KIP-595's EndQuorumEpoch): it stops
  // leading and tells the other voters, the most up to date first; the first
  // of them campaigns at once, the others a little later each, instead of
  // all waiting out an election timeout. The resigned node does not campaign
  // itself until it hears of a later term. No-op unless leader.
  void resign();
  // The state machine has applied everything <= index and `data` is its
  // snapshot: forget the log up to index. Call between Readies.
  void compact(LogIndex index, Bytes data);

  bool has_ready() const;
  Ready take_ready();

  NodeId id() const { return config_.id; }
  Role role() const { return role_; }
  Term term() const { return term_; }
  NodeId vote() const { return vote_; }
  NodeId leader() const { return leader_; }
  bool is_voter() const;
  const RaftLog& log() const { return log_; }
  const SnapshotPtr& snapshot() const { return snapshot_; }
  const RaftConfig& config() const { return config_; }
  // Leader only (empty otherwise): what it knows of every other member's log
  // (read-only, for DescribeQuorum).
  const std::map<NodeId, Progress>& progress() const { return progress_; }
  std::string describe() const;

 private:
  // Elections (raft_node.cc).
  void become_follower(Term term, NodeId leader);
  void become_leader();
  void start_election(bool pre_vote);
  void handle_vote(const Message& m);
  void handle_vote_response(const Message& m);
  void handle_end_quorum(const Message& m);
  bool check_quorum_active();
  void reset_election_timer();
  size_t quorum() const { return config_.voters.size() / 2 + 1; }
  bool is_voter(NodeId id) const;
  bool is_member(NodeId id) const;
  void send(Message m);

  // Replication (replication.cc).
  void handle_append(const Message& m);
  void handle_heartbeat(const Message& m);
  void handle_snapshot(const Message& m);
  void handle_append_response(const Message& m);
  void handle_heartbeat_response(const Message& m);
  bool send_append(NodeId to, bool allow_empty);
  void send_commit_update(NodeId to);
  void broadcast_append();
  void broadcast_heartbeat();
  bool maybe_commit();
  void mark_unstable(LogIndex from);
  Message reply(const Message& m, MessageType type) const;

  RaftConfig config_;
  Rng rng_;
  Role role_ = Role::kFollower;
  Term term_;
  NodeId vote_ = kNoNode;
  NodeId leader_ = kNoNode;
  bool resigned_ = false;  // resign()ed in term_: leaves the election to the others
  RaftLog log_;
  SnapshotPtr snapshot_;  // the latest snapshot we have (sent to lagging followers)

  int election_elapsed_ = 0;
  int heartbeat_elapsed_ = 0;
  int randomized_election_ticks_ = 0;
  std::map<NodeId, Progress> progress_;  // leader: every other member
  std::map<NodeId, bool> votes_;         // candidate: voter -> granted

  // Output not yet handed out by take_ready().
  std::vector<Message> msgs_;
  LogIndex unstable_from_;  // entries >= this are not yet persisted (kNoIndex: none)
  SnapshotPtr snapshot_to_persist_;
  bool snapshot_to_apply_ = false;
  HardState persisted_hs_;
};

}  // namespace samsa::raft

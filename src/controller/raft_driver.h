#pragma once
// RaftDriver: runs one raft::RaftNode on a Runtime — the one loop that
// performs a Ready, shared by the product (the controller quorum, next) and
// the simulator (the same class on a SimRuntime).
//
// Each Ready is performed completely, in ready.h's order, before the node
// gets its next input:
//   1. persist through RaftStorage (persist_ready: snapshot, entries, hard
//      state, then the fsync) — INLINE on the loop thread. Why not on the
//      BlockingExecutor: ready.h forbids feeding the node anything (a tick, a
//      message, a proposal) until the Ready is done, so an asynchronous fsync
//      would mean queueing every input meanwhile; the metadata log is small
//      and the controller's loop does nothing else while it waits. (etcd's
//      asynchronous storage writes are the later optimisation.)
//   2. send the messages through the RaftTransport (a vote or an append
//      acknowledgement promises durable state: only after 1);
//   3. apply: restore the state machine from the snapshot if asked, then the
//      committed entries in order.
// A storage failure stops the driver for good (failure() says why; Kafka's
// raft client halts the process on a log or quorum-state write error): no
// message is sent and nothing applied for that Ready, ticks stop, inputs are
// ignored. Ticks come from a runtime timer every `tick_ms`.
//
// Loop-thread only. The Runtime, storage, transport and state machine must
// outlive the driver. Inputs (receive, propose, campaign, compact) must not
// be called from inside the state machine's callbacks.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>

#include "base/result.h"
#include "io/runtime.h"
#include "raft/config.h"
#include "raft/raft_node.h"
#include "raft/raft_storage.h"

namespace samsa {

// Carries messages to the other members; best effort (may drop, delay,
// duplicate, reorder: Raft copes).
class RaftTransport {
 public:
  virtual ~RaftTransport() = default;
  virtual void send(const raft::Message& message) = 0;
};

// What the committed log is applied to.
class RaftStateMachine {
 public:
  virtual ~RaftStateMachine() = default;
  // Replace the whole state by a snapshot (at start, and when the leader
  // sent one): everything <= snapshot.index is in it.
  virtual void restore(const raft::Snapshot& snapshot) = 0;
  // One committed entry, in index order (LeaderChange entries included).
  virtual void apply(const raft::Entry& entry) = 0;
  // After every input's Readies are performed (or the driver failed): the
  // node's role, term and log as they now are. Inputs to the driver are
  // allowed from here (they are not from restore/apply).
  virtual void after_readies(const raft::RaftNode& node) { (void)node; }
};

struct RaftDriverOptions {
  raft::RaftConfig raft;  // its seed is replaced by the runtime's
  int64_t tick_ms = 100;
};

class RaftDriver {
 public:
  // Loads the storage, restores the state machine from its snapshot, builds
  // the node and performs its first Ready; ticks start.
  static Result<std::unique_ptr<RaftDriver>> start(Runtime& runtime, raft::RaftStorage& storage,
                                                    RaftTransport& transport, RaftStateMachine& machine,
                                                    RaftDriverOptions options);
  ~RaftDriver();
  RaftDriver(const RaftDriver&) = delete;
  RaftDriver& operator=(const RaftDriver&) = delete;

  void receive(const raft::Message& message);
  raft::ProposeResult propose(Bytes data);
  void campaign();
  void resign();  // RaftNode::resign: a leader's graceful hand-over
  // The state machine has applied everything <= index and `data` is its
  // snapshot: the node forgets its log up to there (persisted by the Ready).
  void compact(raft::LogIndex index, Bytes data);

  const raft::RaftNode& node() const { return *node_; }
  // While leader: when a member last answered it (KRaft: its last Fetch) and
  // when that answer last showed it had the leader's whole log, in wall-clock
  // ms; -1 unknown. Forgotten when leadership changes. For DescribeQuorum.
  struct PeerActivity {
    int64_t last_fetch_ms = -1;
    int64_t last_caught_up_ms = -1;
  };
  PeerActivity activity(NodeId member) const;
  bool failed() const { return failure_.has_value(); }
  const std::optional<Error>& failure() const { return failure_; }
  uint64_t readies() const { return readies_; }

 private:
  RaftDriver(Runtime& runtime, raft::RaftStorage& storage, RaftTransport& transport, RaftStateMachine& machine,
             int64_t tick_ms);
  void schedule_tick();
  void on_tick();
  void perform_readies();
  void fail(Error error);
  void note_activity(const raft::Message& message);

  Runtime& runtime_;
  raft::RaftStorage& storage_;
  RaftTransport& transport_;
  RaftStateMachine& machine_;
  int64_t tick_ms_;
  std::unique_ptr<raft::RaftNode> node_;
  TimerId tick_timer_ = 0;
  bool in_ready_ = false;
  uint64_t readies_ = 0;
  std::optional<Error> failure_;
  raft::Term activity_term_;  // the term `activity_` was observed in as leader
  std::map<NodeId, PeerActivity> activity_;
};

}  // namespace samsa

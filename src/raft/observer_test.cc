#include "raft/observer.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>

#include "raft/raft_node.h"

namespace samsa::raft {
namespace {

// What an observer's disk holds, kept by the rules of ObserverReady.
struct ObserverDisk {
  SnapshotPtr snapshot;
  std::vector<Entry> entries;
  HardState hard_state;

  void persist(const ObserverReady& r) {
    if (r.snapshot) {
      snapshot = r.snapshot;
      entries.clear();
    }
    if (r.truncate_after) std::erase_if(entries, [&](const Entry& e) { return e.index > *r.truncate_after; });
    if (!r.entries.empty()) {
      std::erase_if(entries, [&](const Entry& e) { return e.index >= r.entries.front().index; });
      entries.insert(entries.end(), r.entries.begin(), r.entries.end());
    }
    if (r.hard_state) hard_state = *r.hard_state;
  }
  PersistentState state() const { return PersistentState{hard_state, snapshot, entries}; }
};

// Three voters (lossless push among them, ids 1-3) and one pulling
// observer (id 4) whose fetches reach a voter unless either is cut off.
class World {
 public:
  World() {
    for (int i = 1; i <= 3; ++i) {
      RaftConfig c;
      c.id = NodeId(i);
      c.voters = {NodeId(1), NodeId(2), NodeId(3)};
      c.seed = uint64_t(i);
      voters_[NodeId(i)] = std::make_unique<RaftNode>(c, PersistentState{});
    }
    restart_observer();
  }
  RaftNode& n(int id) { return *voters_.at(NodeId(id)); }
  RaftObserver& obs() { return *observer_; }
  void restart_observer() {
    ObserverConfig c;
    c.id = NodeId(4);
    c.voters = {NodeId(1), NodeId(2), NodeId(3)};
    c.request_timeout_ticks = 5;
    observer_ = std::make_unique<RaftObserver>(c, disk_.state());
    pending_.reset();
  }

  void settle() {
    for (int round = 0; round < 100; ++round) {
      drain();
      if (msgs_.empty()) return;
      auto batch = std::move(msgs_);
      msgs_.clear();
      for (auto& m : batch) {
        if (!cut_.count(m.from) && !cut_.count(m.to)) n(m.to.value()).step(m);
      }
    }
  }
  // One tick: voters first, then the observer's fetch is answered (if its
  // target is reachable) within the same tick.
  void tick(int ticks = 1) {
    for (int t = 0; t < ticks; ++t) {
      for (auto& [id, node] : voters_) node->tick();
      settle();
      observer_->tick();
      pump_observer();
    }
  }
  void pump_observer() {
    for (int i = 0; i < 50; ++i) {
      while (observer_->has_ready()) {
        ObserverReady r = observer_->take_ready();
        disk_.persist(r);
        if (r.apply_snapshot) {
          applied_.clear();
          snapshot_applied_ = r.snapshot;
        }
        for (auto& e : r.committed) applied_.push_back(e);
        if (r.fetch) pending_ = *r.fetch;
        if (r.fetch) ++fetches_[r.fetch->to];
      }
      if (!pending_) return;
      FetchRequest req = *pending_;
      pending_.reset();
      if (cut_.count(req.to) || cut_.count(NodeId(4))) return;  // lost: the observer times out
      observer_->step(answer_fetch(n(req.to.value()), req, 3));
    }
  }
  int leader() {
    for (auto& [id, node] : voters_) {
      if (node->role() == Role::kLeader && !cut_.count(id)) return id.value();
    }
    return 0;
  }
  LogIndex propose(Bytes data) {
    ProposeResult r = n(leader()).propose(std::move(data));
    EXPECT_TRUE(r.accepted);
    settle();
    return r.index;
  }
  void cut(int id) { cut_.insert(NodeId(id)); }
  void heal() { cut_.clear(); }
  const std::vector<Entry>& applied() const { return applied_; }
  const SnapshotPtr& snapshot_applied() const { return snapshot_applied_; }
  int fetches_to(int id) { return fetches_[NodeId(id)]; }
  // The committed entries of voter `id` after the observer's applied snapshot.
  std::vector<Entry> committed_of(int id) {
    const RaftLog& log = n(id).log();
    LogIndex from = snapshot_applied_ ? snapshot_applied_->index + 1 : LogIndex(1);
    return log.slice(std::max(from, log.first_index()), log.commit(), SIZE_MAX);
  }

 private:
  void drain() {
    for (auto& [id, node] : voters_) {
      while (node->has_ready()) {
        Ready r = node->take_ready();
        for (auto& m : r.messages) msgs_.push_back(m);
      }
    }
  }

  std::map<NodeId, std::unique_ptr<RaftNode>> voters_;
  std::unique_ptr<RaftObserver> observer_;
  ObserverDisk disk_;
  std::optional<FetchRequest> pending_;
  std::vector<Message> msgs_;
  std::set<NodeId> cut_;
  std::vector<Entry> applied_;
  SnapshotPtr snapshot_applied_;
  std::map<NodeId, int> fetches_;
};

TEST(RaftObserver, PullsAndAppliesWhatTheQuorumCommitted) {
  World w;
  w.tick(30);
  int leader = w.leader();
  ASSERT_NE(leader, 0);
  for (uint8_t i = 0; i < 10; ++i) w.propose(Bytes{i});
  w.tick(5);
  EXPECT_EQ(w.obs().leader(), NodeId(leader));
  EXPECT_EQ(w.obs().term(), w.n(leader).term());
  EXPECT_EQ(w.applied(), w.committed_of(leader));
  EXPECT_EQ(w.obs().log().commit(), w.n(leader).log().commit());
  EXPECT_GE(w.applied().size(), 11u);  // the leader-change entry and ten proposals
}

TEST(RaftObserver, AFollowerNamesTheLeader) {
  World w;
  w.tick(30);
  int leader = w.leader();
  int follower = leader == 1 ? 2 : 1;
  FetchRequest req{NodeId(4), NodeId(follower), kNoIndex, kNoTerm};
  FetchResponse r = answer_fetch(w.n(follower), req, 3);
  EXPECT_EQ(r.outcome, FetchOutcome::kNotLeader);
  EXPECT_EQ(r.leader_hint, NodeId(leader));
  EXPECT_TRUE(r.entries.empty());
}

TEST(RaftObserver, FollowsTheNewLeaderWhenTheOldOneIsLost) {
  World w;
  w.tick(30);
  int old_leader = w.leader();
  w.propose(Bytes{1});
  w.tick(3);
  ASSERT_EQ(w.obs().leader(), NodeId(old_leader));
  w.cut(old_leader);
  w.tick(60);  // election among the other two, observer times out and re-discovers
  int leader = w.leader();
  ASSERT_NE(leader, 0);
  ASSERT_NE(leader, old_leader);
  w.propose(Bytes{2});
  w.tick(10);
  EXPECT_EQ(w.obs().leader(), NodeId(leader));
  EXPECT_EQ(w.applied(), w.committed_of(leader));
  EXPECT_EQ(w.applied().back().data, (Bytes{2}));
}

TEST(RaftObserver, DropsADeposedLeadersUncommittedSuffix) {
  World w;
  w.tick(30);
  int old_leader = w.leader();
  w.propose(Bytes{1});
  w.tick(3);
  // The old leader loses its voters but not the observer: what it accepts
  // now reaches the observer's log, never its applied entries.
  int a = old_leader == 1 ? 2 : 1;
  int b = 6 - old_leader - a;
  w.cut(a);
  w.cut(b);
  ProposeResult stale = w.n(old_leader).propose(Bytes{66});
  ASSERT_TRUE(stale.accepted);
  w.settle();
  w.tick(1);
  ASSERT_EQ(w.obs().log().last_index(), stale.index);
  size_t applied_before = w.applied().size();
  // The other two elect a leader and commit other entries at those indexes.
  w.heal();
  w.cut(old_leader);
  w.tick(60);
  int leader = w.leader();
  ASSERT_NE(leader, 0);
  ASSERT_NE(leader, old_leader);
  for (uint8_t i = 10; i < 14; ++i) w.propose(Bytes{i});
  w.tick(15);
  EXPECT_EQ(w.obs().leader(), NodeId(leader));
  EXPECT_GT(w.applied().size(), applied_before);
  EXPECT_EQ(w.applied(), w.committed_of(leader));
  for (const Entry& e : w.applied()) EXPECT_NE(e.data, (Bytes{66}));
  EXPECT_EQ(w.obs().log().last_index(), w.n(leader).log().last_index());
}

TEST(RaftObserver, TakesTheSnapshotWhenTheLogIsCompacted) {
  World w;
  w.cut(4);  // the observer hears nothing yet
  w.tick(30);
  int leader = w.leader();
  for (uint8_t i = 0; i < 6; ++i) w.propose(Bytes{i});
  w.tick(3);
  LogIndex applied = w.n(leader).log().applied();
  w.n(leader).compact(applied, Bytes{42});
  w.propose(Bytes{7});
  w.heal();
  w.tick(10);
  ASSERT_NE(w.snapshot_applied(), nullptr);
  EXPECT_EQ(w.snapshot_applied()->index, applied);
  EXPECT_EQ(w.snapshot_applied()->data, (Bytes{42}));
  EXPECT_EQ(w.applied(), w.committed_of(leader));
  EXPECT_EQ(w.applied().back().data, (Bytes{7}));
}

TEST(RaftObserver, RestartsFromItsOwnLog) {
  World w;
  w.tick(30);
  int leader = w.leader();
  for (uint8_t i = 0; i < 5; ++i) w.propose(Bytes{i});
  w.tick(5);
  LogIndex had = w.obs().log().last_index();
  int before = w.fetches_to(leader);
  w.restart_observer();
  EXPECT_EQ(w.obs().log().last_index(), had);
  EXPECT_EQ(w.obs().log().commit(), had);
  w.propose(Bytes{9});
  w.tick(10);
  EXPECT_GT(w.fetches_to(leader), before);
  EXPECT_EQ(w.obs().log().commit(), w.n(leader).log().commit());
}

TEST(RaftObserver, IgnoresAnAnswerItDidNotAskFor) {
  ObserverConfig c;
  c.id = NodeId(4);
  c.voters = {NodeId(1), NodeId(2), NodeId(3)};
  RaftObserver o(c, PersistentState{});
  o.tick();
  ObserverReady r = o.take_ready();
  ASSERT_TRUE(r.fetch);
  EXPECT_EQ(r.fetch->to, NodeId(1));
  FetchResponse answer;
  answer.outcome = FetchOutcome::kEntries;
  answer.from = NodeId(2);  // not the voter asked
  answer.to = NodeId(4);
  answer.term = Term(1);
  answer.entries = {Entry{Term(1), LogIndex(1), EntryKind::kNormal, Bytes{5}}};
  answer.commit = LogIndex(1);
  o.step(answer);
  EXPECT_EQ(o.log().last_index(), kNoIndex);
  EXPECT_TRUE(o.in_flight());
}

TEST(RaftObserver, AsksTheNextVoterAfterATimeout) {
  ObserverConfig c;
  c.id = NodeId(4);
  c.voters = {NodeId(1), NodeId(2), NodeId(3)};
  c.request_timeout_ticks = 3;
  RaftObserver o(c, PersistentState{});
  std::vector<NodeId> asked;
  for (int t = 0; t < 10; ++t) {
    o.tick();
    ObserverReady r = o.take_ready();
    if (r.fetch) asked.push_back(r.fetch->to);
  }
  ASSERT_GE(asked.size(), 3u);
  EXPECT_EQ(asked[0], NodeId(1));
  EXPECT_EQ(asked[1], NodeId(2));
  EXPECT_EQ(asked[2], NodeId(3));
}

}  // namespace
}  // namespace samsa::raft

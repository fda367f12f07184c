#include "raft/raft_node.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>

namespace samsa::raft {
namespace {

// A tiny lossless harness: performs every Ready (persisting = keeping the
// state in memory) and delivers messages until the group is quiet.
class Group {
 public:
  explicit Group(int voters, int observers = 0) {
    for (int i = 1; i <= voters + observers; ++i) {
      RaftConfig c;
      c.id = NodeId(i);
      for (int v = 1; v <= voters; ++v) c.voters.push_back(NodeId(v));
      for (int o = voters + 1; o <= voters + observers; ++o) c.observers.push_back(NodeId(o));
      c.seed = uint64_t(i);
      configs_[NodeId(i)] = c;
      nodes_[NodeId(i)] = std::make_unique<RaftNode>(c, PersistentState{});
    }
  }
  RaftNode& n(int id) { return *nodes_.at(NodeId(id)); }

  // Collect outgoing messages of every node (its Ready), record what was persisted.
  void drain_readies() {
    for (auto& [id, node] : nodes_) {
      while (node->has_ready()) {
        Ready r = node->take_ready();
        if (r.hard_state) hard_state_[id] = *r.hard_state;
        for (auto& m : r.messages) {
          // Ready ordering: a vote grant goes out only with its hard state persisted.
          if (m.type == MessageType::kVoteResponse && !m.reject && !m.pre_vote) {
            EXPECT_EQ(hard_state_[id].vote, m.to);
          }
          inflight_.push_back(m);
        }
        for (auto& e : r.committed) applied_[id].push_back(e);
      }
    }
  }
  void settle(int rounds = 100) {
    for (int i = 0; i < rounds; ++i) {
      drain_readies();
      if (inflight_.empty()) return;
      auto batch = std::move(inflight_);
      inflight_.clear();
      for (auto& m : batch) {
        if (cut_.count(m.from) || cut_.count(m.to)) continue;
        n(m.to.value()).step(m);
      }
    }
  }
  void tick_all(int ticks) {
    for (int t = 0; t < ticks; ++t) {
      for (auto& [id, node] : nodes_) node->tick();
      settle();
    }
  }
  int leader() {
    int found = 0;
    for (auto& [id, node] : nodes_) {
      if (node->role() == Role::kLeader && !cut_.count(id)) found = id.value();
    }
    return found;
  }
  void isolate(int id) { cut_.insert(NodeId(id)); }
  void heal() { cut_.clear(); }
  std::vector<Entry>& applied(int id) { return applied_[NodeId(id)]; }

 private:
  std::map<NodeId, RaftConfig> configs_;
  std::map<NodeId, std::unique_ptr<RaftNode>> nodes_;
  std::map<NodeId, HardState> hard_state_;
  std::map<NodeId, std::vector<Entry>> applied_;
  std::vector<Message> inflight_;
  std::set<NodeId> cut_;
};

TEST(RaftNode, SingleVoterElectsItselfAndCommits) {
  Group g(1);
  g.tick_all(25);
  ASSERT_EQ(g.leader(), 1);
  ProposeResult r = g.n(1).propose(Bytes{1, 2, 3});
  ASSERT_TRUE(r.accepted);
  g.settle();
  EXPECT_EQ(g.n(1).log().commit(), r.index);
  ASSERT_FALSE(g.applied(1).empty());
  EXPECT_EQ(g.applied(1).back().data, (Bytes{1, 2, 3}));
}

TEST(RaftNode, ThreeVotersElectOneLeaderAndReplicate) {
  Group g(3);
  g.tick_all(25);
  int leader = g.leader();
  ASSERT_NE(leader, 0);
  ProposeResult r = g.n(leader).propose(Bytes{7});
  ASSERT_TRUE(r.accepted);
  g.settle();
  g.tick_all(3);  // heartbeats carry the commit to followers
  for (int i = 1; i <= 3; ++i) {
    EXPECT_EQ(g.n(i).log().commit(), r.index) << "node " << i;
    EXPECT_EQ(g.n(i).term(), g.n(leader).term());
  }
}

TEST(RaftNode, FollowerRefusesProposals) {
  Group g(3);
  g.tick_all(25);
  int leader = g.leader();
  int follower = leader == 1 ? 2 : 1;
  ProposeResult r = g.n(follower).propose(Bytes{1});
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.leader_hint, NodeId(leader));
}

TEST(RaftNode, VoteRefusedToLessUpToDateLog) {
  RaftConfig c;
  c.id = NodeId(1);
  c.voters = {NodeId(1), NodeId(2), NodeId(3)};
  PersistentState st;
  st.hard_state.term = Term(2);
  st.entries = {Entry{Term(2), LogIndex(1), EntryKind::kNormal, {}}};
  RaftNode n(c, st);
  Message m;
  m.type = MessageType::kVote;
  m.from = NodeId(2);
  m.to = NodeId(1);
  m.term = Term(3);
  m.log_index = LogIndex(5);
  m.log_term = Term(1);  // longer, but older
  n.step(m);
  Ready r = n.take_ready();
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_TRUE(r.messages[0].reject);
  EXPECT_EQ(n.vote(), kNoNode);
  EXPECT_EQ(n.term(), Term(3));
}

TEST(RaftNode, GrantedVoteIsInTheSameReadyAsItsHardState) {
  RaftConfig c;
  c.id = NodeId(1);
  c.voters = {NodeId(1), NodeId(2), NodeId(3)};
  RaftNode n(c, PersistentState{});
  Message m;
  m.type = MessageType::kVote;
  m.from = NodeId(2);
  m.to = NodeId(1);
  m.term = Term(1);
  n.step(m);
  Ready r = n.take_ready();
  ASSERT_TRUE(r.hard_state.has_value());
  EXPECT_EQ(r.hard_state->vote, NodeId(2));
  EXPECT_EQ(r.hard_state->term, Term(1));
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_FALSE(r.messages[0].reject);
}

TEST(RaftNode, IsolatedFollowerDoesNotBumpItsTermAndLeaderSurvives) {
  Group g(3);
  g.tick_all(25);
  int leader = g.leader();
  ASSERT_NE(leader, 0);
  Term term = g.n(leader).term();
  int loner = leader == 3 ? 1 : 3;
  g.isolate(loner);
  g.tick_all(100);
  EXPECT_EQ(g.n(loner).term(), term);  // pre-vote never succeeded
  g.heal();
  g.tick_all(30);
  EXPECT_EQ(g.leader(), leader);
  EXPECT_EQ(g.n(leader).term(), term);
}

TEST(RaftNode, IsolatedLeaderStepsDown) {
  Group g(3);
  g.tick_all(25);
  int leader = g.leader();
  ASSERT_NE(leader, 0);
  g.isolate(leader);
  g.tick_all(25);
  EXPECT_NE(g.n(leader).role(), Role::kLeader);
  EXPECT_NE(g.leader(), 0);
  EXPECT_NE(g.leader(), leader);
}

TEST(RaftNode, AResigningLeadersSuccessorIsElectedAtOnce) {
  Group g(3);
  g.tick_all(25);
  int old = g.leader();
  ASSERT_NE(old, 0);
  ASSERT_TRUE(g.n(old).propose(Bytes{1}).accepted);
  g.settle();
  Term before = g.n(old).term();
  g.n(old).resign();
  g.settle();  // no tick: no election timeout can have run out
  int successor = g.leader();
  ASSERT_NE(successor, 0) << "no leader right after the resignation";
  EXPECT_NE(successor, old);
  EXPECT_EQ(g.n(successor).term(), before + 1);
  g.tick_all(60);  // the resigned node leaves the election to the others
  EXPECT_EQ(g.leader(), successor);
  EXPECT_EQ(g.n(old).role(), Role::kFollower);
  EXPECT_EQ(g.n(old).leader(), NodeId(successor));
}

TEST(RaftNode, WhenTheFirstSuccessorIsGoneTheNextStandsWithinAHeartbeatPerPlace) {
  Group g(5);
  g.tick_all(25);
  int old = g.leader();
  ASSERT_NE(old, 0);
  // Every log matches, so the successors are in voter order: the first is
  // the lowest id but the old leader's. Cut it off.
  g.isolate(old == 1 ? 2 : 1);
  g.n(old).resign();
  g.settle();
  ASSERT_EQ(g.leader(), 0) << "the first successor was cut off; the others wait their turn";
  // 3 more voters behind it; the farthest stands after 3 heartbeat intervals,
  // well inside the election timeout (10-19 ticks).
  for (int t = 0; t < 2 * 3 + 1 && g.leader() == 0; ++t) g.tick_all(1);
  EXPECT_NE(g.leader(), 0) << "no successor stood within a heartbeat interval per place";
  EXPECT_NE(g.leader(), old);
}

TEST(RaftNode, ResignIsANoOpForAFollower) {
  Group g(3);
  g.tick_all(25);
  int leader = g.leader();
  int follower = leader == 1 ? 2 : 1;
  g.n(follower).resign();
  g.settle();
  EXPECT_EQ(g.leader(), leader);
}

TEST(RaftNode, ObserverReplicatesButNeverCampaigns) {
  Group g(1, 1);
  g.tick_all(50);
  EXPECT_EQ(g.leader(), 1);
  EXPECT_EQ(g.n(2).role(), Role::kFollower);
  ProposeResult r = g.n(1).propose(Bytes{9});
  g.settle();
  g.tick_all(3);
  EXPECT_EQ(g.n(2).log().commit(), r.index);
}

TEST(RaftNode, LaggingFollowerCatchesUpFromSnapshot) {
  Group g(3);
  g.tick_all(25);
  int leader = g.leader();
  int lagger = leader == 3 ? 1 : 3;
  g.isolate(lagger);
  for (int i = 0; i < 10; ++i) g.n(leader).propose(Bytes{uint8_t(i)});
  g.settle();
  g.tick_all(2);
  LogIndex applied = g.n(leader).log().applied();
  ASSERT_GE(applied, LogIndex(10));
  g.n(leader).compact(applied, Bytes{42});
  g.settle();
  g.heal();
  g.tick_all(5);
  ASSERT_TRUE(g.n(lagger).snapshot());
  EXPECT_EQ(g.n(lagger).snapshot()->data, Bytes{42});
  EXPECT_GE(g.n(lagger).log().commit(), applied);
}

TEST(RaftNode, RestartKeepsTermVoteAndLog) {
  RaftConfig c;
  c.id = NodeId(2);
  c.voters = {NodeId(1), NodeId(2), NodeId(3)};
  PersistentState st;
  st.hard_state = HardState{Term(5), NodeId(3), LogIndex(1)};
  st.entries = {Entry{Term(4), LogIndex(1), EntryKind::kNormal, {1}}, Entry{Term(5), LogIndex(2), EntryKind::kNormal, {2}}};
  RaftNode n(c, st);
  EXPECT_EQ(n.term(), Term(5));
  EXPECT_EQ(n.vote(), NodeId(3));
  EXPECT_EQ(n.log().last_index(), LogIndex(2));
  Ready r = n.take_ready();
  ASSERT_EQ(r.committed.size(), 1u);  // re-apply what was committed before the crash
  EXPECT_EQ(r.committed[0].data, Bytes{1});
}

}  // namespace
}  // namespace samsa::raft

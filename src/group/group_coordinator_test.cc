#include "group/group_coordinator.h"

#include <gtest/gtest.h>

namespace samsa::group {
namespace {

using protocol::ErrorCode;

struct Harness {
  Rng rng{1};
  std::vector<std::pair<int32_t, OffsetsRecord>> log;
  ErrorCode fail_appends = ErrorCode::kNone;
  CoordinatorConfig config;
  std::unique_ptr<GroupCoordinator> gc;
  int64_t now = 1000;

  explicit Harness(int32_t initial_delay = 0) {
    config.initial_rebalance_delay_ms = initial_delay;
    gc = make();
  }
  std::unique_ptr<GroupCoordinator> make() {
    return std::make_unique<GroupCoordinator>(config, rng, [this](int32_t p, const std::vector<OffsetsRecord>& rs) {
      if (fail_appends != ErrorCode::kNone) return fail_appends;
      for (const auto& r : rs) log.push_back({p, r});
      return ErrorCode::kNone;
    });
  }
  // A commit whose records reach the ISR at once (what OffsetCommit waits
  // for before finish_commit).
  std::vector<ErrorCode> commit(const CommitRequest& c) {
    CommitResult r = gc->commit(c, now);
    gc->finish_commit(r.pending, true);
    return r.errors;
  }
  void advance(int64_t ms) {
    now += ms;
    gc->tick(now);
  }

  JoinRequest join_request(const std::string& member, const std::string& protocol = "range",
                           std::optional<std::string> instance = std::nullopt) {
    JoinRequest r;
    r.group_id = "g";
    r.member_id = member;
    r.group_instance_id = instance;
    r.client_id = "client";
    r.client_host = "/127.0.0.1";
    r.session_timeout_ms = 10000;
    r.rebalance_timeout_ms = 20000;
    r.protocol_type = "consumer";
    r.protocols = {{protocol, Bytes{1, 2, 3}}};
    r.require_known_member_id = true;
    return r;
  }
  // Returns a slot filled when the join is answered.
  std::shared_ptr<std::optional<JoinResult>> join(const JoinRequest& r) {
    auto slot = std::make_shared<std::optional<JoinResult>>();
    gc->join(r, now, [slot](const JoinResult& res) { *slot = res; });
    return slot;
  }
  std::shared_ptr<std::optional<SyncResult>> sync(const std::string& member, int32_t generation,
                                                  std::map<std::string, Bytes> assignments = {}) {
    SyncRequest r;
    r.group_id = "g";
    r.member_id = member;
    r.generation = generation;
    r.assignments = std::move(assignments);
    auto slot = std::make_shared<std::optional<SyncResult>>();
    gc->sync(r, now, [slot](const SyncResult& res) { *slot = res; });
    return slot;
  }
  // KIP-394 two-step join; returns the parked slot.
  std::shared_ptr<std::optional<JoinResult>> join_new(std::string& member_id) {
    auto first = join(join_request(""));
    EXPECT_TRUE(first->has_value());
    EXPECT_EQ((*first)->error, ErrorCode::kMemberIdRequired);
    member_id = (*first)->member_id;
    return join(join_request(member_id));
  }
  GroupState state() const { return gc->find("g")->state; }
};

TEST(GroupCoordinator, TwoMembersJoinSyncAndBecomeStable) {
  Harness h;
  std::string a, b;
  auto ja = h.join_new(a);
  EXPECT_FALSE(ja->has_value());  // parked: initial delay 0 still waits for the tick
  auto jb = h.join_new(b);
  EXPECT_EQ(h.state(), GroupState::kPreparingRebalance);
  h.advance(1);
  ASSERT_TRUE(ja->has_value() && jb->has_value());
  EXPECT_EQ((*ja)->error, ErrorCode::kNone);
  EXPECT_EQ((*ja)->generation, 1);
  EXPECT_EQ((*ja)->protocol_name, "range");
  const JoinResult& leader = (*ja)->leader == a ? **ja : **jb;
  const JoinResult& follower = (*ja)->leader == a ? **jb : **ja;
  EXPECT_EQ(leader.members.size(), 2u);
  EXPECT_TRUE(follower.members.empty());
  EXPECT_EQ(h.state(), GroupState::kCompletingRebalance);

  auto sf = h.sync(follower.member_id, 1);
  EXPECT_FALSE(sf->has_value());
  auto sl = h.sync(leader.member_id, 1, {{leader.member_id, Bytes{9}}, {follower.member_id, Bytes{8, 8}}});
  ASSERT_TRUE(sf->has_value() && sl->has_value());
  EXPECT_EQ((*sf)->assignment, (Bytes{8, 8}));
  EXPECT_EQ((*sl)->assignment, (Bytes{9}));
  EXPECT_EQ(h.state(), GroupState::kStable);
  ASSERT_FALSE(h.log.empty());
  auto* rec = std::get_if<GroupRecord>(&h.log.back().second);
  ASSERT_NE(rec, nullptr);
  EXPECT_EQ(rec->value->members.size(), 2u);
  EXPECT_EQ(h.log.back().first, partition_for("g", 50));
  EXPECT_EQ(h.gc->heartbeat("g", a, std::nullopt, 1, h.now), ErrorCode::kNone);
  EXPECT_EQ(h.gc->heartbeat("g", a, std::nullopt, 0, h.now), ErrorCode::kIllegalGeneration);
  EXPECT_EQ(h.gc->heartbeat("g", "nobody", std::nullopt, 1, h.now), ErrorCode::kUnknownMemberId);
}

// Brings a group of `n` members to Stable; returns their ids (leader first).
std::vector<std::string> stable_group(Harness& h, int n) {
  std::vector<std::string> ids(n);
  std::vector<std::shared_ptr<std::optional<JoinResult>>> joins;
  for (int i = 0; i < n; ++i) joins.push_back(h.join_new(ids[i]));
  h.advance(1);
  std::string leader = (*joins[0])->leader;
  int32_t gen = (*joins[0])->generation;
  for (auto& id : ids) {
    if (id != leader) h.sync(id, gen);
  }
  h.sync(leader, gen);
  EXPECT_EQ(h.state(), GroupState::kStable);
  std::erase(ids, leader);
  ids.insert(ids.begin(), leader);
  return ids;
}

TEST(GroupCoordinator, InitialDelayWaitsForMoreMembers) {
  Harness h(3000);
  std::string a, b;
  auto ja = h.join_new(a);
  h.advance(2000);
  EXPECT_FALSE(ja->has_value());
  auto jb = h.join_new(b);
  h.advance(1000);  // the first delay ends, but a member joined: another round
  EXPECT_FALSE(ja->has_value());
  h.advance(3000);
  ASSERT_TRUE(ja->has_value() && jb->has_value());
  EXPECT_EQ((*ja)->generation, 1);
}

TEST(GroupCoordinator, LeaveTriggersRebalanceAndRemainingMemberRejoins) {
  Harness h;
  auto ids = stable_group(h, 2);
  LeaveResult left = h.gc->leave("g", {{ids[1], std::nullopt}}, h.now);
  EXPECT_EQ(left.members, std::vector<ErrorCode>{ErrorCode::kNone});
  EXPECT_EQ(h.state(), GroupState::kPreparingRebalance);
  EXPECT_EQ(h.gc->heartbeat("g", ids[0], std::nullopt, 1, h.now), ErrorCode::kRebalanceInProgress);
  auto j = h.join(h.join_request(ids[0]));
  ASSERT_TRUE(j->has_value());  // all remaining members joined: completes at once
  EXPECT_EQ((*j)->generation, 2);
  EXPECT_EQ((*j)->members.size(), 1u);
}

TEST(GroupCoordinator, SessionExpiryRemovesSilentMember) {
  Harness h;
  auto ids = stable_group(h, 2);
  for (int i = 0; i < 3; ++i) {
    h.advance(3000);
    EXPECT_EQ(h.gc->heartbeat("g", ids[0], std::nullopt, 1, h.now), ErrorCode::kNone);
  }
  h.advance(3000);  // ids[1] expired after 10 s
  EXPECT_EQ(h.gc->heartbeat("g", ids[0], std::nullopt, 1, h.now), ErrorCode::kRebalanceInProgress);
  EXPECT_EQ(h.state(), GroupState::kPreparingRebalance);
  EXPECT_EQ(h.gc->find("g")->members.count(ids[1]), 0u);
}

// Issue 12 item 10: the driver arms one timer at next_deadline_ms() (no
// 100 ms tick), so a silent member is removed exactly when its session
// timeout has passed since its last heartbeat, as Kafka's per-member
// heartbeat purgatory does (GroupCoordinator.scala / DelayedHeartbeat).
TEST(GroupCoordinator, NextDeadlineIsTheSessionExpiryOfTheSilentMember) {
  Harness h;
  auto ids = stable_group(h, 2);
  h.now += 2345;  // an odd offset: no tick grid lines up with the deadline
  ASSERT_EQ(h.gc->heartbeat("g", ids[0], std::nullopt, 1, h.now), ErrorCode::kNone);
  const int64_t silent_since = h.gc->find("g")->members.at(ids[1]).deadline_ms - 10000;
  const int64_t expiry = silent_since + 10000;  // session.timeout.ms 10000
  ASSERT_EQ(h.gc->next_deadline_ms(), std::optional<int64_t>(expiry));

  // The driver's timer fires at the reported deadline: 1 ms before it the
  // member is still there, at it the member is gone.
  h.gc->tick(expiry - 1);
  EXPECT_EQ(h.gc->find("g")->members.count(ids[1]), 1u);
  EXPECT_EQ(h.state(), GroupState::kStable);
  h.gc->tick(*h.gc->next_deadline_ms());
  EXPECT_EQ(h.gc->find("g")->members.count(ids[1]), 0u);
  EXPECT_EQ(h.state(), GroupState::kPreparingRebalance);
  // Next: the remaining member's session or the rebalance's deadline.
  const Group& g = *h.gc->find("g");
  EXPECT_EQ(h.gc->next_deadline_ms(), std::min(g.join_deadline_ms, g.members.at(ids[0]).deadline_ms));
}

TEST(GroupCoordinator, NoDeadlineWithoutGroups) {
  Harness h;
  EXPECT_EQ(h.gc->next_deadline_ms(), std::nullopt);
}

TEST(GroupCoordinator, UnjoinedMemberDroppedAtRebalanceTimeout) {
  Harness h;
  auto ids = stable_group(h, 2);
  std::string c;
  auto jc = h.join_new(c);
  auto j0 = h.join(h.join_request(ids[0]));
  EXPECT_FALSE(jc->has_value());
  // ids[1] keeps heartbeating (REBALANCE_IN_PROGRESS) but never rejoins.
  for (int i = 0; i < 7; ++i) {
    h.advance(3000);
    h.gc->heartbeat("g", ids[1], std::nullopt, 1, h.now);
  }
  ASSERT_TRUE(jc->has_value() && j0->has_value());
  EXPECT_EQ((*jc)->generation, 2);
  EXPECT_EQ(h.gc->find("g")->members.size(), 2u);
  EXPECT_EQ(h.gc->heartbeat("g", ids[1], std::nullopt, 2, h.now), ErrorCode::kUnknownMemberId);
}

TEST(GroupCoordinator, JoinV0AddsMemberWithoutMemberIdRequired) {
  Harness h;
  JoinRequest r = h.join_request("");
  r.require_known_member_id = false;
  auto j = h.join(r);
  h.advance(1);
  ASSERT_TRUE(j->has_value());
  EXPECT_EQ((*j)->error, ErrorCode::kNone);
  EXPECT_EQ((*j)->leader, (*j)->member_id);
}

TEST(GroupCoordinator, RejectsBadSessionTimeoutAndInconsistentProtocol) {
  Harness h;
  JoinRequest r = h.join_request("");
  r.session_timeout_ms = 10;
  EXPECT_EQ((*h.join(r))->error, ErrorCode::kInvalidSessionTimeout);
  stable_group(h, 1);
  JoinRequest other = h.join_request("", "roundrobin");
  other.require_known_member_id = false;
  EXPECT_EQ((*h.join(other))->error, ErrorCode::kInconsistentGroupProtocol);
}

TEST(GroupCoordinator, StaticMemberRejoinsWithoutRebalance) {
  Harness h;
  auto first = h.join(h.join_request("", "range", "inst-1"));
  h.advance(1);
  ASSERT_TRUE(first->has_value());
  std::string old_id = (*first)->member_id;
  h.sync(old_id, 1, {{old_id, Bytes{7}}});
  ASSERT_EQ(h.state(), GroupState::kStable);
  auto again = h.join(h.join_request("", "range", "inst-1"));
  ASSERT_TRUE(again->has_value());
  EXPECT_EQ((*again)->error, ErrorCode::kNone);
  EXPECT_EQ((*again)->generation, 1);
  EXPECT_NE((*again)->member_id, old_id);
  EXPECT_EQ((*again)->leader, old_id);  // the old leader id: it must not assign
  EXPECT_TRUE((*again)->members.empty());
  EXPECT_EQ(h.state(), GroupState::kStable);
  auto s = h.sync((*again)->member_id, 1);
  EXPECT_EQ((*s)->assignment, (Bytes{7}));
  EXPECT_EQ(h.gc->heartbeat("g", old_id, std::string("inst-1"), 1, h.now), ErrorCode::kFencedInstanceId);
}

TEST(GroupCoordinator, CommitFetchAndSimpleCommits) {
  Harness h;
  auto ids = stable_group(h, 1);
  CommitRequest c;
  c.group_id = "g";
  c.generation = 1;
  c.member_id = ids[0];
  c.partitions = {{"t", 0, 42, 3, "meta", -1}, {"t", 1, 7, -1, std::nullopt, -1}};
  EXPECT_EQ(h.commit(c), (std::vector<ErrorCode>{ErrorCode::kNone, ErrorCode::kNone}));
  auto got = h.gc->committed("g", "t", 0);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->offset, 42);
  EXPECT_EQ(got->leader_epoch, 3);
  EXPECT_EQ(got->metadata, "meta");
  c.generation = 0;
  EXPECT_EQ(h.commit(c)[0], ErrorCode::kIllegalGeneration);
  c.generation = -1;
  c.member_id = "";
  EXPECT_EQ(h.commit(c)[0], ErrorCode::kUnknownMemberId);  // group has members

  CommitRequest simple;
  simple.group_id = "simple";
  simple.partitions = {{"t", 0, 5, -1, std::nullopt, -1}};
  EXPECT_EQ(h.commit(simple)[0], ErrorCode::kNone);
  EXPECT_EQ(h.gc->committed("simple", "t", 0)->offset, 5);
  simple.partitions[0].metadata = std::string(5000, 'x');
  EXPECT_EQ(h.commit(simple)[0], ErrorCode::kOffsetMetadataTooLarge);

  h.fail_appends = ErrorCode::kNotLeaderOrFollower;
  simple.partitions[0].metadata = "";
  simple.partitions[0].offset = 6;
  EXPECT_EQ(h.commit(simple)[0], ErrorCode::kNotCoordinator);
  EXPECT_EQ(h.gc->committed("simple", "t", 0)->offset, 5);  // a failed append is not visible
}

TEST(GroupCoordinator, ACommitIsVisibleOnlyOnceReplicated) {
  Harness h;
  CommitRequest c;
  c.group_id = "s";
  c.partitions = {{"t", 0, 5, -1, std::nullopt, -1}};
  CommitResult first = h.gc->commit(c, h.now);
  ASSERT_EQ(first.errors[0], ErrorCode::kNone);
  EXPECT_FALSE(h.gc->committed("s", "t", 0).has_value());  // appended, not yet replicated
  EXPECT_TRUE(h.gc->all_committed("s").empty());
  h.gc->expire_offsets(h.now + h.config.offsets_retention_ms);
  ASSERT_NE(h.gc->find("s"), nullptr);  // a pending commit keeps its group

  c.partitions[0].offset = 6;
  CommitResult second = h.gc->commit(c, h.now);
  h.gc->finish_commit(first.pending, true);
  EXPECT_EQ(h.gc->committed("s", "t", 0)->offset, 5);
  h.gc->finish_commit(second.pending, true);
  EXPECT_EQ(h.gc->committed("s", "t", 0)->offset, 6);

  c.partitions[0].offset = 7;
  h.gc->finish_commit(h.gc->commit(c, h.now).pending, false);  // never reached the ISR
  EXPECT_EQ(h.gc->committed("s", "t", 0)->offset, 6);
  EXPECT_TRUE(h.gc->find("s")->pending_offsets.empty());
}

TEST(GroupCoordinator, DeletingAGroupTombstonesItsPendingCommits) {
  Harness h;
  CommitRequest c;
  c.group_id = "s";
  c.partitions = {{"t", 0, 5, -1, std::nullopt, -1}};
  CommitResult pending = h.gc->commit(c, h.now);
  ASSERT_EQ(h.gc->delete_group("s"), ErrorCode::kNone);
  auto* tomb = std::get_if<OffsetRecord>(&h.log.back().second);
  ASSERT_NE(tomb, nullptr);
  EXPECT_EQ(tomb->key.topic, "t");
  EXPECT_FALSE(tomb->value.has_value());
  h.gc->finish_commit(pending.pending, true);  // the group is gone: nothing comes back
  EXPECT_EQ(h.gc->find("s"), nullptr);
}

TEST(GroupCoordinator, ReplayRebuildsOffsetsAndStableGroup) {
  Harness h;
  auto ids = stable_group(h, 2);
  CommitRequest c;
  c.group_id = "g";
  c.generation = 1;
  c.member_id = ids[0];
  c.partitions = {{"t", 0, 10, -1, "", -1}, {"t", 1, 11, -1, "", -1}};
  h.commit(c);
  c.partitions = {{"t", 0, 20, -1, "", -1}};
  h.commit(c);
  CommitRequest simple;
  simple.group_id = "gone";
  simple.partitions = {{"t", 0, 1, -1, "", -1}};
  h.commit(simple);
  EXPECT_EQ(h.gc->delete_group("gone"), ErrorCode::kNone);

  auto fresh = h.make();
  for (const auto& [p, r] : h.log) {
    // Every record survives its own byte encoding.
    auto decoded = decode_record(encode_key(r), encode_value(r) ? std::optional<ByteView>(*encode_value(r))
                                                                : std::nullopt);
    ASSERT_TRUE(decoded.has_value());
    fresh->load(*decoded);
  }
  fresh->finish_loading(h.now);
  EXPECT_EQ(fresh->committed("g", "t", 0)->offset, 20);
  EXPECT_EQ(fresh->committed("g", "t", 1)->offset, 11);
  EXPECT_EQ(fresh->find("gone"), nullptr);
  const Group* g = fresh->find("g");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->state, GroupState::kStable);
  EXPECT_EQ(g->generation, 1);
  EXPECT_EQ(g->members.size(), 2u);
  EXPECT_EQ(fresh->heartbeat("g", ids[1], std::nullopt, 1, h.now), ErrorCode::kNone);
}

TEST(GroupCoordinator, UnloadingAPartitionForgetsItsGroupsAndAnswersParkedMembers) {
  Harness h;
  auto ids = stable_group(h, 1);
  CommitRequest other;
  other.group_id = "elsewhere";
  other.partitions = {{"t", 0, 9, -1, "", -1}};
  ASSERT_NE(h.gc->partition_for("elsewhere"), h.gc->partition_for("g"));
  ASSERT_EQ(h.commit(other)[0], ErrorCode::kNone);
  // A second member parks the group's rebalance: the first one's rejoin waits.
  std::string b;
  auto parked_b = h.join_new(b);
  EXPECT_FALSE(parked_b->has_value());

  h.gc->unload_partition(h.gc->partition_for("g"));
  ASSERT_TRUE(parked_b->has_value());
  EXPECT_EQ((*parked_b)->error, ErrorCode::kNotCoordinator);
  EXPECT_EQ(h.gc->find("g"), nullptr);
  EXPECT_EQ(h.gc->committed("elsewhere", "t", 0)->offset, 9);  // another partition's group stays

  // Leading it again: its groups come back from the log.
  for (const auto& [p, r] : h.log) {
    if (p == h.gc->partition_for("g")) h.gc->load(r);
  }
  h.gc->finish_loading(h.now);
  ASSERT_NE(h.gc->find("g"), nullptr);
  EXPECT_EQ(h.gc->find("g")->members.count(ids[0]), 1u);
}

TEST(GroupCoordinator, DeleteGroupAndOffsetsRules) {
  Harness h;
  auto ids = stable_group(h, 1);
  EXPECT_EQ(h.gc->delete_group("g"), ErrorCode::kNonEmptyGroup);
  EXPECT_EQ(h.gc->delete_group("nope"), ErrorCode::kGroupIdNotFound);
  h.gc->leave("g", {{ids[0], std::nullopt}}, h.now);
  EXPECT_EQ(h.state(), GroupState::kEmpty);
  EXPECT_EQ(h.gc->find("g")->generation, 2);
  EXPECT_EQ(h.gc->delete_group("g"), ErrorCode::kNone);
  EXPECT_EQ(h.gc->find("g"), nullptr);
  auto* tomb = std::get_if<GroupRecord>(&h.log.back().second);
  ASSERT_NE(tomb, nullptr);
  EXPECT_FALSE(tomb->value.has_value());
}

TEST(GroupCoordinator, OffsetsOfEmptyGroupExpireAfterRetention) {
  Harness h;
  h.config.offsets_retention_ms = 60000;
  h.gc = h.make();
  CommitRequest simple;
  simple.group_id = "s";
  simple.partitions = {{"t", 0, 1, -1, "", -1}};
  h.commit(simple);
  h.gc->expire_offsets(h.now + 59999);
  EXPECT_TRUE(h.gc->committed("s", "t", 0).has_value());
  h.gc->expire_offsets(h.now + 60000);
  EXPECT_FALSE(h.gc->committed("s", "t", 0).has_value());
  EXPECT_EQ(h.gc->find("s"), nullptr);
}

TEST(GroupCoordinator, MaxSizeRejectsExtraMember) {
  Harness h;
  h.config.max_size = 1;
  h.gc = h.make();
  stable_group(h, 1);
  JoinRequest r = h.join_request("");
  r.require_known_member_id = false;
  EXPECT_EQ((*h.join(r))->error, ErrorCode::kGroupMaxSizeReached);
}

}  // namespace
}  // namespace samsa::group

namespace samsa::group {
namespace {

TEST(GroupCoordinator, BatchLeaveByInstanceIdAndUnknownMembers) {
  Harness h;
  auto first = h.join(h.join_request("", "range", "inst-1"));
  h.advance(1);
  ASSERT_TRUE(first->has_value());
  h.sync((*first)->member_id, 1);
  ASSERT_EQ(h.state(), GroupState::kStable);
  LeaveResult r = h.gc->leave("g", {{"", std::string("inst-1")}, {"ghost", std::nullopt}, {"", std::string("nope")}},
                              h.now);
  EXPECT_EQ(r.error, ErrorCode::kNone);
  EXPECT_EQ(r.members, (std::vector<ErrorCode>{ErrorCode::kNone, ErrorCode::kUnknownMemberId,
                                               ErrorCode::kUnknownMemberId}));
  EXPECT_EQ(h.state(), GroupState::kEmpty);
  LeaveResult absent = h.gc->leave("other", {{"x", std::nullopt}}, h.now);
  EXPECT_EQ(absent.error, ErrorCode::kNone);
  EXPECT_EQ(absent.members, std::vector<ErrorCode>{ErrorCode::kUnknownMemberId});
}

}  // namespace
}  // namespace samsa::group

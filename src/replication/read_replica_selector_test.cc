#include "replication/read_replica_selector.h"

#include <gtest/gtest.h>

namespace samsa::replication {
namespace {

const ReadReplicaView kLeader{NodeId(1), "rack-a", Offset(100)};

TEST(ReadReplicaSelector, NoClientRackReadsFromTheLeader) {
  EXPECT_EQ(select_read_replica("", kLeader, {{NodeId(2), "rack-b", Offset(100)}}), NodeId(1));
}

TEST(ReadReplicaSelector, TheLeaderOnTheClientsRackWins) {
  EXPECT_EQ(select_read_replica("rack-a", kLeader, {{NodeId(2), "rack-a", Offset(100)}}), NodeId(1));
}

TEST(ReadReplicaSelector, AFollowerOnTheClientsRack) {
  EXPECT_EQ(select_read_replica("rack-b", kLeader,
                                {{NodeId(2), "rack-c", Offset(100)}, {NodeId(3), "rack-b", Offset(90)}}),
            NodeId(3));
}

TEST(ReadReplicaSelector, TheMostCaughtUpFollowerOfTheRackThenTheLowestId) {
  std::vector<ReadReplicaView> followers{
      {NodeId(4), "rack-b", Offset(95)}, {NodeId(3), "rack-b", Offset(99)}, {NodeId(2), "rack-b", Offset(99)}};
  EXPECT_EQ(select_read_replica("rack-b", kLeader, followers), NodeId(2));
}

TEST(ReadReplicaSelector, NoReplicaOnTheClientsRackReadsFromTheLeader) {
  EXPECT_EQ(select_read_replica("rack-z", kLeader, {{NodeId(2), "rack-b", Offset(100)}}), NodeId(1));
  EXPECT_EQ(select_read_replica("rack-z", kLeader, {{NodeId(2), std::nullopt, Offset(100)}}), NodeId(1));
}

}  // namespace
}  // namespace samsa::replication

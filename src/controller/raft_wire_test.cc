// raft_wire: every raft::Message type through the Kafka codec and back;
// truncated and garbage bytes; the inbound checks (cluster id, voter ids,
// limits) with the Kafka error code each answers.

#include "controller/raft_wire.h"

#include <gtest/gtest.h>

#include "base/byte_reader.h"
#include "base/rng.h"
#include "protocol/codec.h"

namespace samsa {
namespace {

using protocol::ErrorCode;
using raft::LogIndex;
using raft::Message;
using raft::MessageType;
using raft::Term;

const RaftWireIdentity kMe{"cluster-A", NodeId(2), {NodeId(1), NodeId(2), NodeId(3)}, {NodeId(4)}};

template <typename T>
Bytes wire(const T& value, int16_t version) {
  OutBuffer out;
  protocol::Encoder w(out);
  value.encode(w, version);
  return out.bytes();
}

template <typename T>
std::optional<T> parse(ByteView bytes, int16_t version) {
  T value;
  ByteReader r(bytes);
  if (!value.decode(r, version) || !r.ok() || !r.at_end()) return std::nullopt;
  return value;
}

// Every prefix fails to parse, and random bytes never crash the decoder
// (whatever parses goes through the raft-level checks too).
template <typename T, typename Check>
void expect_robust(const Bytes& bytes, int16_t version, Check check) {
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(parse<T>(ByteView(bytes.data(), n), version).has_value()) << "prefix of " << n << " bytes parsed";
  }
  Rng rng(7);
  for (int i = 0; i < 2000; ++i) {
    Bytes garbage = bytes;
    for (int k = 0; k < 3; ++k) garbage[rng.uniform(garbage.size())] = uint8_t(rng.next_u64());
    if (auto v = parse<T>(garbage, version)) check(*v);
  }
  for (int i = 0; i < 500; ++i) {
    Bytes garbage(rng.uniform(64) + 1);
    for (auto& b : garbage) b = uint8_t(rng.next_u64());
    if (auto v = parse<T>(garbage, version)) check(*v);
  }
}

void expect_same(const Message& a, const Message& b) {
  EXPECT_EQ(a.describe(), b.describe());
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.from, b.from);
  EXPECT_EQ(a.to, b.to);
  EXPECT_EQ(a.term, b.term);
  EXPECT_EQ(a.pre_vote, b.pre_vote);
  EXPECT_EQ(a.reject, b.reject);
  EXPECT_EQ(a.log_index, b.log_index);
  EXPECT_EQ(a.log_term, b.log_term);
  EXPECT_EQ(a.commit, b.commit);
  EXPECT_EQ(a.reject_hint, b.reject_hint);
  EXPECT_EQ(a.entries, b.entries);
  EXPECT_EQ(a.successors, b.successors);
  ASSERT_EQ(bool(a.snapshot), bool(b.snapshot));
  if (a.snapshot) {
    EXPECT_EQ(a.snapshot->index, b.snapshot->index);
    EXPECT_EQ(a.snapshot->term, b.snapshot->term);
    EXPECT_EQ(a.snapshot->data, b.snapshot->data);
  }
}

Message request(MessageType type) {
  Message m;
  m.type = type;
  m.from = NodeId(1);
  m.to = NodeId(2);
  m.term = Term(7);
  return m;
}

Message vote(bool pre_vote) {
  Message m = request(MessageType::kVote);
  m.pre_vote = pre_vote;
  m.log_index = LogIndex(41);
  m.log_term = Term(6);
  return m;
}

Message append(size_t entries, size_t bytes_each = 3) {
  Message m = request(MessageType::kAppend);
  m.log_index = LogIndex(10);
  m.log_term = Term(5);
  m.commit = LogIndex(9);
  for (size_t i = 0; i < entries; ++i) {
    m.entries.push_back(raft::Entry{Term(i == 0 ? 6 : 7), LogIndex(11 + int64_t(i)),
                                    i == 1 ? raft::EntryKind::kLeaderChange : raft::EntryKind::kNormal,
                                    Bytes(bytes_each, uint8_t('a' + i % 26))});
  }
  return m;
}

Message snapshot() {
  Message m = request(MessageType::kSnapshot);
  m.snapshot = std::make_shared<raft::Snapshot>(raft::Snapshot{LogIndex(30), Term(6), Bytes{1, 2, 3, 4}});
  return m;
}

InboundRaftRequest push_round_trip(const Message& m, const RaftWireIdentity& me = kMe,
                                   std::string_view cluster = "cluster-A") {
  Bytes bytes = wire(encode_push_request(m, cluster), kRaftPushVersion);
  auto parsed = parse<protocol::SamsaRaftPushRequest>(bytes, kRaftPushVersion);
  EXPECT_TRUE(parsed.has_value());
  return decode_push_request(*parsed, me);
}

TEST(RaftWire, VoteAndPreVoteRoundTripAtEveryVersion) {
  for (bool pre_vote : {false, true}) {
    Message m = vote(pre_vote);
    for (int16_t version = 0; version <= kVoteVersion; ++version) {
      Bytes bytes = wire(encode_vote_request(m, "cluster-A"), version);
      auto parsed = parse<protocol::VoteRequest>(bytes, version);
      ASSERT_TRUE(parsed.has_value());
      InboundRaftRequest in = decode_vote_request(*parsed, version, kMe);
      ASSERT_EQ(in.error, ErrorCode::kNone);
      Message expected = m;
      expected.pre_vote = version >= 2 && pre_vote;  // PreVote exists from v2 (KIP-996)
      expect_same(in.message, expected);
    }
  }
}

TEST(RaftWire, VoteAnswersRoundTrip) {
  for (bool pre_vote : {false, true}) {
    for (bool reject : {false, true}) {
      Message sent = vote(pre_vote);
      Message answer;
      answer.type = MessageType::kVoteResponse;
      answer.from = NodeId(2);
      answer.to = NodeId(1);
      answer.term = Term(reject ? 9 : 7);
      answer.reject = reject;
      answer.pre_vote = pre_vote;
      Bytes bytes = wire(encode_vote_response(answer, ErrorCode::kNone), kVoteVersion);
      auto parsed = parse<protocol::VoteResponse>(bytes, kVoteVersion);
      ASSERT_TRUE(parsed.has_value());
      auto back = decode_vote_response(*parsed, sent);
      ASSERT_TRUE(back.ok()) << back.error().to_string();
      ASSERT_TRUE(back->has_value());
      expect_same(**back, answer);
    }
  }
  // Nothing to say: no topics, no message.
  auto none = parse<protocol::VoteResponse>(wire(encode_vote_response(std::nullopt, ErrorCode::kNone), 2), 2);
  ASSERT_TRUE(none.has_value());
  auto back = decode_vote_response(*none, vote(false));
  ASSERT_TRUE(back.ok());
  EXPECT_FALSE(back->has_value());
}

TEST(RaftWire, PushRequestsRoundTrip) {
  Message heartbeat = request(MessageType::kHeartbeat);
  heartbeat.commit = LogIndex(12);
  for (const Message& m : {append(0), append(3), heartbeat, snapshot()}) {
    InboundRaftRequest in = push_round_trip(m);
    ASSERT_EQ(in.error, ErrorCode::kNone) << m.describe();
    Message expected = m;
    if (m.type != MessageType::kAppend) expected.log_index = LogIndex(), expected.log_term = Term();
    if (m.type == MessageType::kSnapshot) expected.commit = LogIndex();
    expect_same(in.message, expected);
  }
}

TEST(RaftWire, PushAnswersRoundTrip) {
  for (MessageType type : {MessageType::kAppendResponse, MessageType::kHeartbeatResponse}) {
    for (bool reject : {false, true}) {
      Message sent = append(2);
      Message answer;
      answer.type = type;
      answer.from = NodeId(2);
      answer.to = NodeId(1);
      answer.term = Term(7);
      answer.reject = reject;
      answer.log_index = LogIndex(12);
      answer.reject_hint = LogIndex(reject ? 4 : 0);
      auto parsed = parse<protocol::SamsaRaftPushResponse>(wire(encode_push_response(answer, ErrorCode::kNone), 0), 0);
      ASSERT_TRUE(parsed.has_value());
      auto back = decode_push_response(*parsed, sent);
      ASSERT_TRUE(back.ok());
      ASSERT_TRUE(back->has_value());
      expect_same(**back, answer);
    }
  }
}

Message end_quorum() {
  Message m = request(MessageType::kEndQuorum);
  m.successors = {NodeId(3), NodeId(2)};
  return m;
}

TEST(RaftWire, EndQuorumEpochRoundTripsAtEveryVersionAndIsChecked) {
  for (int16_t version = 0; version <= kEndQuorumEpochVersion; ++version) {
    auto parsed = parse<protocol::EndQuorumEpochRequest>(wire(encode_end_quorum_request(end_quorum(), "cluster-A"),
                                                              version), version);
    ASSERT_TRUE(parsed.has_value()) << "v" << version;
    InboundRaftRequest in = decode_end_quorum_request(*parsed, version, kMe);
    ASSERT_EQ(in.error, ErrorCode::kNone) << "v" << version;
    Message expected = end_quorum();
    expected.to = kMe.self;
    expect_same(in.message, expected);

    auto refusal = [&](auto change) {
      protocol::EndQuorumEpochRequest r = *parsed;
      change(r.topics[0].partitions[0]);
      return decode_end_quorum_request(r, version, kMe).error;
    };
    auto name = [&](std::vector<int32_t> ids) {
      return [ids](protocol::EndQuorumEpochRequest::PartitionData& p) {
        p.preferred_successors = ids;
        p.preferred_candidates.clear();
        for (int32_t id : ids) p.preferred_candidates.push_back({id, {}});
      };
    };
    EXPECT_EQ(refusal(name({4})), ErrorCode::kInvalidRequest) << "an observer named as successor";
    EXPECT_EQ(refusal(name({3, 3})), ErrorCode::kInvalidRequest) << "a successor named twice";
    EXPECT_EQ(refusal(name({1, 2, 3, 1})), ErrorCode::kInvalidRequest) << "more successors than voters";
    EXPECT_EQ(refusal([](auto& p) { p.leader_id = 4; }), ErrorCode::kInconsistentVoterSet);
    EXPECT_EQ(refusal([](auto& p) { p.leader_epoch = 0; }), ErrorCode::kInvalidRequest);
    EXPECT_EQ(refusal([](auto& p) { p.partition_index = 1; }), ErrorCode::kUnknownTopicOrPartition);
  }
  auto other = parse<protocol::EndQuorumEpochRequest>(wire(encode_end_quorum_request(end_quorum(), "cluster-B"), 1), 1);
  EXPECT_EQ(decode_end_quorum_request(*other, 1, kMe).error, ErrorCode::kInconsistentClusterId);
  // The answer only acknowledges, or carries the refusal back as an Error.
  auto ok = parse<protocol::EndQuorumEpochResponse>(wire(encode_end_quorum_response(ErrorCode::kNone), 1), 1);
  ASSERT_TRUE(ok.has_value());
  auto none = decode_end_quorum_response(*ok);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  EXPECT_FALSE(decode_end_quorum_response(encode_end_quorum_response(ErrorCode::kInconsistentVoterSet)).ok());
  EXPECT_FALSE(decode_end_quorum_response(encode_end_quorum_response(ErrorCode::kInconsistentClusterId)).ok());
}

TEST(RaftWire, TruncatedAndGarbageBytesNeverParseIntoNonsense) {
  auto check_vote = [](const protocol::VoteRequest& v) {
    InboundRaftRequest in = decode_vote_request(v, kVoteVersion, kMe);
    if (in.error == ErrorCode::kNone) {
      EXPECT_EQ(in.message.to, kMe.self);
      EXPECT_GE(in.message.term, in.message.log_term);
    }
  };
  auto check_push = [](const protocol::SamsaRaftPushRequest& v) {
    InboundRaftRequest in = decode_push_request(v, kMe);
    if (in.error != ErrorCode::kNone) return;
    EXPECT_EQ(in.message.to, kMe.self);
    EXPECT_LE(in.message.entries.size(), kMaxRaftEntriesPerMessage);
    Term last = in.message.log_term;
    for (const auto& e : in.message.entries) {
      EXPECT_GE(e.term, last);
      EXPECT_LE(e.term, in.message.term);
      last = e.term;
    }
    if (in.message.type == MessageType::kSnapshot) {
      EXPECT_TRUE(in.message.snapshot);
    }
  };
  expect_robust<protocol::VoteRequest>(wire(encode_vote_request(vote(true), "cluster-A"), 2), 2, check_vote);
  auto check_end_quorum = [](const protocol::EndQuorumEpochRequest& v) {
    InboundRaftRequest in = decode_end_quorum_request(v, kEndQuorumEpochVersion, kMe);
    if (in.error == ErrorCode::kNone) {
      EXPECT_LE(in.message.successors.size(), kMe.voters.size());
    }
  };
  expect_robust<protocol::EndQuorumEpochRequest>(
      wire(encode_end_quorum_request(end_quorum(), "cluster-A"), kEndQuorumEpochVersion), kEndQuorumEpochVersion,
      check_end_quorum);
  expect_robust<protocol::SamsaRaftPushRequest>(wire(encode_push_request(append(3), "cluster-A"), 0), 0, check_push);
  expect_robust<protocol::SamsaRaftPushRequest>(wire(encode_push_request(snapshot(), "cluster-A"), 0), 0, check_push);
  Message answer;
  answer.type = MessageType::kAppendResponse;
  answer.term = Term(3);
  auto check_answer = [](const protocol::SamsaRaftPushResponse& v) { (void)decode_push_response(v, append(1)); };
  expect_robust<protocol::SamsaRaftPushResponse>(wire(encode_push_response(answer, ErrorCode::kNone), 0), 0,
                                                 check_answer);
  answer.type = MessageType::kVoteResponse;
  auto check_vote_answer = [](const protocol::VoteResponse& v) { (void)decode_vote_response(v, vote(false)); };
  expect_robust<protocol::VoteResponse>(wire(encode_vote_response(answer, ErrorCode::kNone), 2), 2,
                                        check_vote_answer);
}

TEST(RaftWire, AnotherClusterIsInconsistentClusterId) {
  EXPECT_EQ(push_round_trip(append(1), kMe, "cluster-B").error, ErrorCode::kInconsistentClusterId);
  auto v = parse<protocol::VoteRequest>(wire(encode_vote_request(vote(false), "cluster-B"), 2), 2);
  InboundRaftRequest in = decode_vote_request(*v, 2, kMe);
  EXPECT_EQ(in.error, ErrorCode::kInconsistentClusterId);
  // Kafka puts it at the top level of the Vote response.
  EXPECT_EQ(encode_vote_response(std::nullopt, in.error).error_code, int16_t(ErrorCode::kInconsistentClusterId));
  // A request without a cluster id (null) is accepted, as Kafka does.
  protocol::SamsaRaftPushRequest no_id = encode_push_request(append(1), "");
  no_id.cluster_id = std::nullopt;
  EXPECT_EQ(decode_push_request(no_id, kMe).error, ErrorCode::kNone);
}

TEST(RaftWire, VoterIdsAreChecked) {
  Message wrong_destination = append(1);
  wrong_destination.to = NodeId(3);
  EXPECT_EQ(push_round_trip(wrong_destination).error, ErrorCode::kInvalidVoterKey);
  Message observer_leads = append(1);
  observer_leads.from = NodeId(4);  // observers replicate, never lead
  EXPECT_EQ(push_round_trip(observer_leads).error, ErrorCode::kInconsistentVoterSet);
  Message stranger = vote(false);
  stranger.from = NodeId(9);
  auto v = parse<protocol::VoteRequest>(wire(encode_vote_request(stranger, "cluster-A"), 2), 2);
  EXPECT_EQ(decode_vote_request(*v, 2, kMe).error, ErrorCode::kInconsistentVoterSet);
  Message elsewhere = vote(false);
  elsewhere.to = NodeId(3);
  v = parse<protocol::VoteRequest>(wire(encode_vote_request(elsewhere, "cluster-A"), 2), 2);
  EXPECT_EQ(decode_vote_request(*v, 2, kMe).error, ErrorCode::kInvalidVoterKey);
  // v0 has no VoterId: not checked.
  v = parse<protocol::VoteRequest>(wire(encode_vote_request(elsewhere, "cluster-A"), 0), 0);
  EXPECT_EQ(decode_vote_request(*v, 0, kMe).error, ErrorCode::kNone);
}

TEST(RaftWire, MalformedContentIsInvalidRequest) {
  protocol::SamsaRaftPushRequest r = encode_push_request(append(3), "cluster-A");
  r.entries[2].epoch = 5;  // an epoch going down
  EXPECT_EQ(decode_push_request(r, kMe).error, ErrorCode::kInvalidRequest);
  r = encode_push_request(append(1), "cluster-A");
  r.entries[0].epoch = 8;  // beyond the leader's
  EXPECT_EQ(decode_push_request(r, kMe).error, ErrorCode::kInvalidRequest);
  r = encode_push_request(append(1), "cluster-A");
  r.entries[0].kind = 9;
  EXPECT_EQ(decode_push_request(r, kMe).error, ErrorCode::kInvalidRequest);
  r = encode_push_request(append(1), "cluster-A");
  r.kind = 1;  // a heartbeat with entries
  EXPECT_EQ(decode_push_request(r, kMe).error, ErrorCode::kInvalidRequest);
  r = encode_push_request(snapshot(), "cluster-A");
  r.snapshot_index = 0;
  EXPECT_EQ(decode_push_request(r, kMe).error, ErrorCode::kInvalidRequest);
  r = encode_push_request(append(0), "cluster-A");
  r.kind = 7;
  EXPECT_EQ(decode_push_request(r, kMe).error, ErrorCode::kInvalidRequest);
  r = encode_push_request(append(0), "cluster-A");
  r.entries.resize(kMaxRaftEntriesPerMessage + 1);
  for (auto& e : r.entries) e.epoch = 7;
  EXPECT_EQ(decode_push_request(r, kMe).error, ErrorCode::kInvalidRequest);

  auto v = encode_vote_request(vote(false), "cluster-A");
  v.topics[0].topic_name = "other";
  EXPECT_EQ(decode_vote_request(v, 2, kMe).error, ErrorCode::kUnknownTopicOrPartition);
  v.topics.clear();
  EXPECT_EQ(decode_vote_request(v, 2, kMe).error, ErrorCode::kInvalidRequest);
}

TEST(RaftWire, AnAppendIsCutToTheWrittenLimits) {
  EXPECT_EQ(encode_push_request(append(kMaxRaftEntriesPerMessage + 10), "c").entries.size(),
            kMaxRaftEntriesPerMessage);
  // Entries of 3 MiB: two fit in 8 MiB, never fewer than one.
  EXPECT_EQ(encode_push_request(append(4, 3 << 20), "c").entries.size(), 2u);
  EXPECT_EQ(encode_push_request(append(2, 9 << 20), "c").entries.size(), 1u);
  Message big = snapshot();
  big.snapshot = std::make_shared<raft::Snapshot>(raft::Snapshot{LogIndex(3), Term(1), Bytes(kMaxRaftMessageBytes)});
  EXPECT_FALSE(fits_raft_message(big));
  EXPECT_TRUE(fits_raft_message(snapshot()));
}

TEST(RaftWire, PeerErrorsAreErrors) {
  protocol::SamsaRaftPushResponse r;
  r.error_code = int16_t(ErrorCode::kInconsistentClusterId);
  auto back = decode_push_response(r, append(1));
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.error().message().find("INCONSISTENT_CLUSTER_ID"), std::string::npos);
  protocol::VoteResponse v = encode_vote_response(std::nullopt, ErrorCode::kInvalidVoterKey);
  auto vback = decode_vote_response(v, vote(false));
  ASSERT_FALSE(vback.ok());
  EXPECT_NE(vback.error().message().find("INVALID_VOTER_KEY"), std::string::npos);
}

}  // namespace
}  // namespace samsa

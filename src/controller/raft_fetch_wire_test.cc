// raft_fetch_wire: SamsaRaftFetch (1001) through the Kafka codec and back,
// every outcome; truncated and garbage bytes; the inbound checks with the
// Kafka error code each answers; answers that do not fit the request.

#include "controller/raft_fetch_wire.h"

#include <gtest/gtest.h>

#include "base/byte_reader.h"
#include "base/rng.h"
#include "protocol/codec.h"

namespace samsa {
namespace {

using protocol::ErrorCode;
using raft::FetchOutcome;
using raft::FetchRequest;
using raft::FetchResponse;
using raft::LogIndex;
using raft::Term;

const RaftWireIdentity kMe{"cluster-A", NodeId(2), {NodeId(1), NodeId(2), NodeId(3)}, {}};
const FetchRequest kAsked{NodeId(4), NodeId(2), LogIndex(10), Term(3)};

template <typename T>
Bytes wire(const T& value) {
  OutBuffer out;
  protocol::Encoder w(out);
  value.encode(w, kRaftFetchVersion);
  return out.bytes();
}

template <typename T>
std::optional<T> parse(ByteView bytes) {
  T value;
  ByteReader r(bytes);
  if (!value.decode(r, kRaftFetchVersion) || !r.ok() || !r.at_end()) return std::nullopt;
  return value;
}

FetchResponse answer(FetchOutcome outcome) {
  FetchResponse a;
  a.outcome = outcome;
  a.from = NodeId(2);
  a.to = NodeId(4);
  a.term = Term(5);
  a.leader_hint = outcome == FetchOutcome::kNotLeader ? NodeId(1) : NodeId(2);
  return a;
}

FetchResponse entries(size_t n, int64_t commit) {
  FetchResponse a = answer(FetchOutcome::kEntries);
  for (size_t i = 0; i < n; ++i) {
    a.entries.push_back(raft::Entry{Term(i == 0 ? 3 : 5), LogIndex(11 + int64_t(i)),
                                    i == 1 ? raft::EntryKind::kLeaderChange : raft::EntryKind::kNormal,
                                    Bytes{uint8_t(i)}});
  }
  a.commit = LogIndex(commit);
  return a;
}

Result<FetchResponse> round_trip(const FetchResponse& a, const FetchRequest& asked = kAsked) {
  auto parsed = parse<protocol::SamsaRaftFetchResponse>(wire(encode_fetch_response(a, ErrorCode::kNone)));
  EXPECT_TRUE(parsed.has_value());
  return decode_fetch_response(*parsed, asked);
}

TEST(RaftFetchWire, RequestRoundTrips) {
  auto parsed = parse<protocol::SamsaRaftFetchRequest>(wire(encode_fetch_request(kAsked, "cluster-A")));
  ASSERT_TRUE(parsed.has_value());
  InboundRaftFetch in = decode_fetch_request(*parsed, kMe);
  ASSERT_EQ(in.error, ErrorCode::kNone);
  EXPECT_EQ(in.request.from, NodeId(4));
  EXPECT_EQ(in.request.to, NodeId(2));
  EXPECT_EQ(in.request.fetch_index, LogIndex(10));
  EXPECT_EQ(in.request.last_fetched_term, Term(3));
}

TEST(RaftFetchWire, EveryOutcomeRoundTrips) {
  auto e = round_trip(entries(3, 12));
  ASSERT_TRUE(e.ok()) << e.error().message();
  EXPECT_EQ(e.value().outcome, FetchOutcome::kEntries);
  EXPECT_EQ(e.value().entries, entries(3, 12).entries);
  EXPECT_EQ(e.value().commit, LogIndex(12));
  EXPECT_EQ(e.value().from, NodeId(2));
  EXPECT_EQ(e.value().to, NodeId(4));
  EXPECT_EQ(e.value().term, Term(5));

  FetchResponse d = answer(FetchOutcome::kDiverging);
  d.diverging_index = LogIndex(7);
  auto dd = round_trip(d);
  ASSERT_TRUE(dd.ok());
  EXPECT_EQ(dd.value().outcome, FetchOutcome::kDiverging);
  EXPECT_EQ(dd.value().diverging_index, LogIndex(7));

  FetchResponse s = answer(FetchOutcome::kSnapshot);
  s.snapshot = std::make_shared<raft::Snapshot>(raft::Snapshot{LogIndex(20), Term(4), Bytes{1, 2, 3}});
  auto ss = round_trip(s);
  ASSERT_TRUE(ss.ok());
  ASSERT_NE(ss.value().snapshot, nullptr);
  EXPECT_EQ(ss.value().snapshot->index, LogIndex(20));
  EXPECT_EQ(ss.value().snapshot->data, (Bytes{1, 2, 3}));

  auto n = round_trip(answer(FetchOutcome::kNotLeader));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n.value().outcome, FetchOutcome::kNotLeader);
  EXPECT_EQ(n.value().leader_hint, NodeId(1));
}

TEST(RaftFetchWire, ACutAnswerNeverCarriesAHighWatermarkPastItsLastEntry) {
  FetchResponse big = entries(kMaxRaftEntriesPerMessage + 5, 11 + kMaxRaftEntriesPerMessage + 4);
  auto back = round_trip(big);
  ASSERT_TRUE(back.ok());
  ASSERT_EQ(back.value().entries.size(), kMaxRaftEntriesPerMessage);
  EXPECT_EQ(back.value().commit, back.value().entries.back().index);
}

TEST(RaftFetchWire, InboundChecks) {
  auto check = [](FetchRequest r, std::string cluster) {
    auto parsed = parse<protocol::SamsaRaftFetchRequest>(wire(encode_fetch_request(r, cluster)));
    return decode_fetch_request(*parsed, kMe).error;
  };
  EXPECT_EQ(check(kAsked, "cluster-B"), ErrorCode::kInconsistentClusterId);
  FetchRequest elsewhere = kAsked;
  elsewhere.to = NodeId(3);
  EXPECT_EQ(check(elsewhere, "cluster-A"), ErrorCode::kInvalidVoterKey);
  FetchRequest voter = kAsked;
  voter.from = NodeId(1);
  EXPECT_EQ(check(voter, "cluster-A"), ErrorCode::kInconsistentVoterSet);
  FetchRequest negative = kAsked;
  negative.fetch_index = LogIndex(-1);
  EXPECT_EQ(check(negative, "cluster-A"), ErrorCode::kInvalidRequest);
  FetchRequest epoch_of_nothing{NodeId(4), NodeId(2), LogIndex(0), Term(2)};
  EXPECT_EQ(check(epoch_of_nothing, "cluster-A"), ErrorCode::kInvalidRequest);
}

TEST(RaftFetchWire, AnswersThatDoNotFitTheRequestAreErrors) {
  // Entries older than the epoch fetched.
  FetchResponse old = entries(1, 10);
  old.entries[0].term = Term(2);
  EXPECT_FALSE(round_trip(old).ok());
  // A high watermark beyond the entries sent.
  protocol::SamsaRaftFetchResponse hw = encode_fetch_response(entries(2, 12), ErrorCode::kNone);
  hw.high_watermark = 13;
  EXPECT_FALSE(decode_fetch_response(hw, kAsked).ok());
  // A divergence at or above the offset fetched (no progress).
  FetchResponse d = answer(FetchOutcome::kDiverging);
  d.diverging_index = LogIndex(10);
  EXPECT_FALSE(round_trip(d).ok());
  // An error code.
  protocol::SamsaRaftFetchResponse err = encode_fetch_response(answer(FetchOutcome::kEntries), ErrorCode::kInvalidRequest);
  EXPECT_FALSE(decode_fetch_response(err, kAsked).ok());
  protocol::SamsaRaftFetchResponse kind = encode_fetch_response(answer(FetchOutcome::kNotLeader), ErrorCode::kNone);
  kind.kind = 9;
  EXPECT_FALSE(decode_fetch_response(kind, kAsked).ok());
}

TEST(RaftFetchWire, TruncatedAndGarbageBytesNeverCrash) {
  FetchResponse s = answer(FetchOutcome::kSnapshot);
  s.snapshot = std::make_shared<raft::Snapshot>(raft::Snapshot{LogIndex(20), Term(4), Bytes{1, 2, 3}});
  for (const Bytes& bytes : {wire(encode_fetch_response(entries(3, 12), ErrorCode::kNone)),
                             wire(encode_fetch_response(s, ErrorCode::kNone))}) {
    for (size_t n = 0; n < bytes.size(); ++n) {
      EXPECT_FALSE(parse<protocol::SamsaRaftFetchResponse>(ByteView(bytes.data(), n)).has_value());
    }
    Rng rng(11);
    for (int i = 0; i < 2000; ++i) {
      Bytes garbage = bytes;
      for (int k = 0; k < 3; ++k) garbage[rng.uniform(garbage.size())] = uint8_t(rng.next_u64());
      if (auto v = parse<protocol::SamsaRaftFetchResponse>(garbage)) (void)decode_fetch_response(*v, kAsked);
    }
  }
  Bytes request = wire(encode_fetch_request(kAsked, "cluster-A"));
  Rng rng(12);
  for (int i = 0; i < 2000; ++i) {
    Bytes garbage = request;
    for (int k = 0; k < 3; ++k) garbage[rng.uniform(garbage.size())] = uint8_t(rng.next_u64());
    if (auto v = parse<protocol::SamsaRaftFetchRequest>(garbage)) (void)decode_fetch_request(*v, kMe);
  }
}

}  // namespace
}  // namespace samsa

// Fuzz target: the raft requests of the controller listener
// (controller_apis.cc): Vote (52), EndQuorumEpoch (54), SamsaRaftPush (1000)
// and SamsaRaftFetch (1001), decoded with the generated codec as the listener
// does (the whole body, nothing after it) and then checked by the raft wire
// decoders (decode_*_request, controller/raft_wire.h and raft_fetch_wire.h)
// against a fixed identity. The codec alone is fuzzed by `request` (every
// API); this target is about what the raft checks let through to the core.
//
// Input: raft_request_fuzz.h. Properties of an accepted request, beyond
// memory safety and bounded allocation:
//   - it is for this node, from a voter (a fetch: from a non-voter);
//   - Vote: the candidate's last entry epoch <= its epoch;
//   - EndQuorumEpoch: epoch >= 1, successors distinct voters, so at most the voters;
//   - SamsaRaftPush: epoch >= 1; an append's entries at most
//     kMaxRaftEntriesPerMessage, contiguous after prev, epochs non-decreasing
//     from prev's and <= the leader's; a heartbeat carries nothing; a
//     snapshot's epoch in 1..leader's;
//   - the accepted message, encoded as this node would send it and decoded
//     from bytes at the same version, is accepted as the same message.

#include <algorithm>

#include "controller/raft_fetch_wire.h"
#include "fuzz_support.h"
#include "raft_request_fuzz.h"

namespace samsa::fuzz {
namespace {

using raft::MessageType;

static_assert(kRaftRequestApis[0].max_version == protocol::VoteRequest::kMaxVersion);
static_assert(kRaftRequestApis[1].max_version == protocol::EndQuorumEpochRequest::kMaxVersion);
static_assert(kRaftRequestApis[2].max_version == protocol::SamsaRaftPushRequest::kMaxVersion);
static_assert(kRaftRequestApis[3].max_version == protocol::SamsaRaftFetchRequest::kMaxVersion);

const RaftWireIdentity& me() { return fuzz_raft_identity(); }

bool is_voter(NodeId id) { return std::find(me().voters.begin(), me().voters.end(), id) != me().voters.end(); }

// What ControllerApis::decode_body accepts: the whole body, nothing after it.
template <typename Wire>
bool decode_wire(ByteView body, int16_t version, Wire& out) {
  ByteReader r(body);
  return out.decode(r, version) && r.ok() && r.at_end();
}

bool same_snapshot(const raft::SnapshotPtr& a, const raft::SnapshotPtr& b) {
  if (!a || !b) return !a && !b;
  return a->index == b->index && a->term == b->term && a->data == b->data;
}

bool same_message(const raft::Message& a, const raft::Message& b) {
  return a.type == b.type && a.from == b.from && a.to == b.to && a.term == b.term && a.pre_vote == b.pre_vote &&
         a.reject == b.reject && a.log_index == b.log_index && a.log_term == b.log_term && a.commit == b.commit &&
         a.reject_hint == b.reject_hint && a.entries == b.entries && same_snapshot(a.snapshot, b.snapshot) &&
         a.successors == b.successors;
}

void check_vote(const raft::Message& m) {
  FUZZ_CHECK(m.type == MessageType::kVote);
  FUZZ_CHECK(m.term.value() >= 0 && m.log_index.value() >= 0 && m.log_term.value() >= 0);
  FUZZ_CHECK(m.log_term <= m.term);
}

void check_end_quorum(const raft::Message& m) {
  FUZZ_CHECK(m.type == MessageType::kEndQuorum);
  FUZZ_CHECK(m.term.value() >= 1);
  FUZZ_CHECK(m.successors.size() <= me().voters.size());
  for (size_t i = 0; i < m.successors.size(); ++i) {
    FUZZ_CHECK(is_voter(m.successors[i]));
    FUZZ_CHECK(std::count(m.successors.begin(), m.successors.end(), m.successors[i]) == 1);
  }
}

void check_append(const raft::Message& m) {
  FUZZ_CHECK(!m.snapshot);
  FUZZ_CHECK(m.entries.size() <= kMaxRaftEntriesPerMessage);
  FUZZ_CHECK(m.log_index.value() >= 0 && m.log_term.value() >= 0 && m.log_term <= m.term);
  raft::LogIndex index = m.log_index;
  raft::Term epoch = m.log_term;
  for (const raft::Entry& e : m.entries) {
    FUZZ_CHECK(e.index == index + 1);
    FUZZ_CHECK(e.term >= epoch && e.term <= m.term);
    FUZZ_CHECK(e.kind == raft::EntryKind::kNormal || e.kind == raft::EntryKind::kLeaderChange);
    index = e.index;
    epoch = e.term;
  }
}

void check_push(const raft::Message& m) {
  FUZZ_CHECK(m.term.value() >= 1 && m.commit.value() >= 0);
  switch (m.type) {
    case MessageType::kAppend: return check_append(m);
    case MessageType::kHeartbeat:
      FUZZ_CHECK(m.entries.empty() && !m.snapshot);
      return;
    case MessageType::kSnapshot:
      FUZZ_CHECK(m.entries.empty() && m.snapshot);
      FUZZ_CHECK(m.snapshot->index.value() >= 1);
      FUZZ_CHECK(m.snapshot->term.value() >= 1 && m.snapshot->term <= m.term);
      return;
    default: FUZZ_CHECK(!"a push decoded to a message that is not a push");
  }
}

// Checks `m`, then that it survives this node's own encoding to bytes.
template <typename Wire, typename Decode, typename Encode, typename Check>
void fuzz_raft_request(ByteView body, int16_t version, Decode decode, Encode encode, Check check) {
  Wire wire;
  if (!decode_wire(body, version, wire)) return;  // the listener closes the connection
  InboundRaftRequest in = decode(wire);
  if (in.error != protocol::ErrorCode::kNone) return;  // answered with the error
  const raft::Message& m = in.message;
  FUZZ_CHECK(m.to == me().self);
  FUZZ_CHECK(is_voter(m.from));
  check(m);

  Wire again;
  FUZZ_CHECK(decode_wire(encode_wire(encode(m), version), version, again));
  InboundRaftRequest back = decode(again);
  FUZZ_CHECK(back.error == protocol::ErrorCode::kNone);
  FUZZ_CHECK(same_message(back.message, m));
}

void fuzz_fetch(ByteView body) {
  protocol::SamsaRaftFetchRequest wire;
  if (!decode_wire(body, kRaftFetchVersion, wire)) return;
  InboundRaftFetch in = decode_fetch_request(wire, me());
  if (in.error != protocol::ErrorCode::kNone) return;
  const raft::FetchRequest& r = in.request;
  FUZZ_CHECK(r.to == me().self);
  FUZZ_CHECK(r.from.value() >= 0 && !is_voter(r.from));  // voters are pushed to
  FUZZ_CHECK(r.fetch_index.value() >= 0 && r.last_fetched_term.value() >= 0);
  FUZZ_CHECK(r.fetch_index.value() > 0 || r.last_fetched_term.value() == 0);

  protocol::SamsaRaftFetchRequest again;
  FUZZ_CHECK(decode_wire(encode_wire(encode_fetch_request(r, me().cluster_id), kRaftFetchVersion), kRaftFetchVersion,
                         again));
  InboundRaftFetch back = decode_fetch_request(again, me());
  FUZZ_CHECK(back.error == protocol::ErrorCode::kNone);
  FUZZ_CHECK(back.request.from == r.from && back.request.to == r.to && back.request.fetch_index == r.fetch_index &&
             back.request.last_fetched_term == r.last_fetched_term);
}

void check_raft_request(FuzzInput in) {
  const uint8_t api = in.u8() % kRaftRequestApiCount;
  const RaftRequestApi& range = kRaftRequestApis[api];
  const int16_t version = int16_t(range.min_version + in.u8() % (range.max_version - range.min_version + 1));
  ByteView body = in.rest();
  const std::string& cluster = me().cluster_id;
  switch (api) {
    case 0:
      return fuzz_raft_request<protocol::VoteRequest>(
          body, version, [&](const auto& w) { return decode_vote_request(w, version, me()); },
          [&](const raft::Message& m) { return encode_vote_request(m, cluster); }, check_vote);
    case 1:
      return fuzz_raft_request<protocol::EndQuorumEpochRequest>(
          body, version, [&](const auto& w) { return decode_end_quorum_request(w, version, me()); },
          [&](const raft::Message& m) { return encode_end_quorum_request(m, cluster); }, check_end_quorum);
    case 2:
      return fuzz_raft_request<protocol::SamsaRaftPushRequest>(
          body, version, [&](const auto& w) { return decode_push_request(w, me()); },
          [&](const raft::Message& m) { return encode_push_request(m, cluster); }, check_push);
    default: return fuzz_fetch(body);
  }
}

}  // namespace
}  // namespace samsa::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  samsa::fuzz::check_raft_request(samsa::fuzz::FuzzInput(data, size));
  return 0;
}

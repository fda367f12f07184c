#pragma once
// Message: everything Raft nodes say to each other, as one plain struct (a
// type tag picks which fields mean something).
//
// On the wire (controller/raft_wire.h, docs/formats/raft-wire.md):
//   kVote / kVoteResponse          <-> Vote (52) request / response, pre_vote =
//                                      VoteRequest v2 PreVote (KIP-996)
//   kAppend, kHeartbeat, kSnapshot <-> SamsaRaftPush (1000, Samsa-private)
//   and their responses                request / response: KRaft pulls with Fetch /
//                                      FetchSnapshot, we push the same information
//                                      (prev index/term = FetchOffset/LastFetchedEpoch,
//                                      reject_hint = DivergingEpoch end offset;
//                                      a snapshot is sent whole)
//   kEndQuorum                     <-> EndQuorumEpoch (54) request (KIP-595: a
//                                      leader resigning on a graceful shutdown)

#include <string>
#include <vector>

#include "raft/types.h"

namespace samsa::raft {

enum class MessageType : uint8_t {
  kVote,               // log_index/log_term = candidate's last entry
  kVoteResponse,       // reject = not granted
  kAppend,             // log_index/log_term = entry before `entries`; commit
  kAppendResponse,     // ok: log_index = last matching index; reject: log_index =
                       // the rejected prev index, reject_hint = follower's last index
  kHeartbeat,          // commit = min(leader commit, follower match)
  kHeartbeatResponse,
  kSnapshot,           // snapshot; answered by kAppendResponse
  kEndQuorum,          // the leader of `term` resigns; successors = the voters it
                       // prefers, most up to date first. Not answered.
};

struct Message {
  MessageType type = MessageType::kHeartbeat;
  NodeId from = kNoNode;
  NodeId to = kNoNode;
  Term term;              // sender's term (pre-vote: the term it would campaign in)
  bool pre_vote = false;  // kVote / kVoteResponse
  bool reject = false;    // responses
  LogIndex log_index;
  Term log_term;
  LogIndex commit;
  LogIndex reject_hint;
  std::vector<Entry> entries;
  SnapshotPtr snapshot;
  std::vector<NodeId> successors;  // kEndQuorum

  std::string describe() const;  // one line, for traces
};

const char* to_string(MessageType type);

}  // namespace samsa::raft

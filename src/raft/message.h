#pragma once
// Message: everything Raft nodes say to each other, as one plain struct (the
// wire encoding comes later; a type tag picks which fields mean something).
//
// Mapping onto KRaft (KIP-595/996), for when this meets the real network:
//   kVote / kVoteResponse          <-> Vote (52), pre_vote = VoteRequest v2 PreVote
//   kAppend / kAppendResponse      <-> Fetch response / the follower's next Fetch
//                                      (KRaft pulls; we push, same information:
//                                      prev index/term = FetchOffset/LastFetchedEpoch,
//                                      reject_hint = DivergingEpoch end offset)
//   kHeartbeat / kHeartbeatResponse <-> BeginQuorumEpoch / empty Fetch
//   kSnapshot                      <-> FetchSnapshot (sent whole here)

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

  std::string describe() const;  // one line, for traces
};

const char* to_string(MessageType type);

}  // namespace samsa::raft

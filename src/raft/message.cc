#include "raft/message.h"

#include <fmt/format.h>

namespace samsa::raft {

const char* to_string(MessageType type) {
  switch (type) {
    case MessageType::kVote: return "Vote";
    case MessageType::kVoteResponse: return "VoteResp";
    case MessageType::kAppend: return "Append";
    case MessageType::kAppendResponse: return "AppendResp";
    case MessageType::kHeartbeat: return "Heartbeat";
    case MessageType::kHeartbeatResponse: return "HeartbeatResp";
    case MessageType::kSnapshot: return "Snapshot";
    case MessageType::kEndQuorum: return "EndQuorum";
  }
  return "?";
}

std::string Message::describe() const {
  std::string s = fmt::format("{} {}->{} t{}", to_string(type), from.value(), to.value(), term.value());
  if (pre_vote) s += " pre";
  if (reject) s += " REJECT";
  switch (type) {
    case MessageType::kVote:
      s += fmt::format(" last={}/t{}", log_index.value(), log_term.value());
      break;
    case MessageType::kAppend:
      s += fmt::format(" prev={}/t{} n={} commit={}", log_index.value(), log_term.value(), entries.size(),
                       commit.value());
      break;
    case MessageType::kAppendResponse:
      s += fmt::format(" index={} hint={}", log_index.value(), reject_hint.value());
      break;
    case MessageType::kHeartbeat:
      s += fmt::format(" commit={}", commit.value());
      break;
    case MessageType::kEndQuorum:
      for (NodeId n : successors) s += fmt::format(" {}", n.value());
      break;
    case MessageType::kSnapshot:
      if (snapshot) s += fmt::format(" snap={}/t{}", snapshot->index.value(), snapshot->term.value());
      break;
    default:
      break;
  }
  return s;
}

}  // namespace samsa::raft

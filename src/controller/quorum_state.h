#pragma once
// quorum-state: the Raft hard state (term, vote, commit) as the JSON file
// Kafka's FileQuorumStateStore keeps in the metadata log dir, version 0 of
// its QuorumStateData shape (docs/formats/metadata-log.md, "quorum-state"):
//
//   {"leaderId":-1,"leaderEpoch":3,"votedId":2,"appliedOffset":7,"data_version":0}
//
// leaderEpoch = term, votedId = vote (-1: none), appliedOffset = the commit
// index (Kafka writes 0 there; for Samsa it is the high watermark, an
// exclusive end offset, so a restarted node re-applies without a leader).
// leaderId is not part of Raft's hard state: always -1 (Kafka learns the
// leader again from BeginQuorumEpoch or a Fetch, as we do).
//
// Pure: text in, text out. decode never throws and rejects anything that is
// not one flat object of integer fields (at most kMaxQuorumStateBytes).

#include <cstddef>
#include <string>
#include <string_view>

#include "base/result.h"
#include "raft/types.h"

namespace samsa {

inline constexpr std::string_view kQuorumStateFileName = "quorum-state";
inline constexpr size_t kMaxQuorumStateBytes = 4096;

std::string encode_quorum_state(const raft::HardState& state);
Result<raft::HardState> decode_quorum_state(std::string_view json);

}  // namespace samsa

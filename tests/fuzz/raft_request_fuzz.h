#pragma once
// The input layout of the raft_request fuzz target, shared with fuzz_seeds
// (which writes its seeds): byte 0 picks the API (kRaftRequestApis, modulo
// their count), byte 1 its version (modulo the versions the codec has), the
// rest is the request body as the controller listener hands it to the
// generated codec. kFuzzRaftIdentity is the node that decodes it.

#include <cstdint>

#include "base/out_buffer.h"
#include "controller/raft_wire.h"
#include "protocol/codec.h"

namespace samsa::fuzz {

struct RaftRequestApi {
  const char* name;
  int16_t min_version;
  int16_t max_version;
};

// The order is the selector byte's meaning: do not reorder (committed seeds
// and regression inputs start with it).
inline constexpr RaftRequestApi kRaftRequestApis[] = {
    {"Vote", 0, 2},             // 52
    {"EndQuorumEpoch", 0, 1},   // 54
    {"SamsaRaftPush", 0, 0},    // 1000
    {"SamsaRaftFetch", 0, 0},   // 1001
};
inline constexpr uint8_t kRaftRequestApiCount = sizeof(kRaftRequestApis) / sizeof(kRaftRequestApis[0]);

// Node 1 of voters 1-3, node 7 an observer (the one that may fetch).
inline const RaftWireIdentity& fuzz_raft_identity() {
  static const RaftWireIdentity identity{"fuzz-cluster-id", NodeId(1), {NodeId(1), NodeId(2), NodeId(3)}, {NodeId(7)}};
  return identity;
}

// A request body at `version`, as this node puts it on the wire.
template <typename Wire>
Bytes encode_wire(const Wire& wire, int16_t version) {
  OutBuffer out;
  protocol::Encoder w(out);
  wire.encode(w, version);
  return std::move(out.bytes());
}

}  // namespace samsa::fuzz

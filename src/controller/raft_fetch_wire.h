#pragma once
// raft_fetch_wire: raft::FetchRequest / FetchResponse (raft/observer.h) <->
// SamsaRaftFetch (1001, Samsa-private) on the controller listener: how a
// metadata-log observer (a broker-only node) pulls the log from the
// quorum's leader. docs/formats/raft-wire.md, field by field; why a
// private key and not Fetch: docs/decisions/0017-observer-pulls-with-a-private-fetch.md.
//
// Pure: values in, values out. The decoders check what they are handed
// (cluster id, destination, that the fetcher is not a voter, counts and
// epochs) and say which Kafka error code answers it.

#include <string_view>

#include "base/result.h"
#include "controller/raft_wire.h"
#include "protocol/generated/samsa_raft_fetch.h"
#include "raft/observer.h"

namespace samsa {

inline constexpr int16_t kRaftFetchVersion = 0;

struct InboundRaftFetch {
  protocol::ErrorCode error = protocol::ErrorCode::kNone;
  raft::FetchRequest request;
};

protocol::SamsaRaftFetchRequest encode_fetch_request(const raft::FetchRequest& r, std::string_view cluster_id);
// Checked against `me` (a voter answering an observer).
InboundRaftFetch decode_fetch_request(const protocol::SamsaRaftFetchRequest& request, const RaftWireIdentity& me);

// The leader's answer; `error` != kNone answers a refused request. Entries
// are cut to kMaxRaftEntriesPerMessage / kMaxRaftMessageBytes, and the
// high watermark to the last entry sent.
protocol::SamsaRaftFetchResponse encode_fetch_response(const raft::FetchResponse& answer, protocol::ErrorCode error);
// Back on the observer: the answer to `request`, or an Error (an error code
// the voter answered with, or an answer that does not fit the request).
Result<raft::FetchResponse> decode_fetch_response(const protocol::SamsaRaftFetchResponse& response,
                                                  const raft::FetchRequest& request);

}  // namespace samsa

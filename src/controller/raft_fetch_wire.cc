#include "controller/raft_fetch_wire.h"

#include <algorithm>

#include "base/assert.h"

namespace samsa {
namespace {

using protocol::ErrorCode;
using raft::FetchOutcome;
using raft::LogIndex;
using raft::Term;

constexpr size_t kEntryOverheadBytes = 32;   // epoch, kind, length, tags
constexpr size_t kFetchOverheadBytes = 256;  // the fixed part

InboundRaftFetch refused(ErrorCode error) {
  InboundRaftFetch out;
  out.error = error;
  return out;
}

Error invalid(const std::string& why) { return Error(ErrorKind::kInvalidArgument, "a SamsaRaftFetch response " + why); }

bool is_voter(const RaftWireIdentity& me, NodeId id) {
  return std::find(me.voters.begin(), me.voters.end(), id) != me.voters.end();
}

void encode_entries(const std::vector<raft::Entry>& entries, protocol::SamsaRaftFetchResponse& out) {
  size_t bytes = kFetchOverheadBytes;
  for (const raft::Entry& e : entries) {
    bytes += e.data.size() + kEntryOverheadBytes;
    bool full = out.entries.size() == kMaxRaftEntriesPerMessage || bytes > kMaxRaftMessageBytes;
    if (full && !out.entries.empty()) break;
    protocol::SamsaRaftFetchResponse::Entry wire;
    wire.epoch = e.term.value();
    wire.kind = int8_t(e.kind);
    wire.data = e.data;
    out.entries.push_back(std::move(wire));
  }
}

// Entries after (fetch_offset, last_fetched_epoch) of a leader in `epoch`:
// epochs never going down from the one fetched and never beyond the leader's.
Status decode_entries(const protocol::SamsaRaftFetchResponse& in, const raft::FetchRequest& asked,
                      raft::FetchResponse& out) {
  if (in.entries.size() > kMaxRaftEntriesPerMessage) return invalid("with too many entries");
  int64_t epoch = asked.last_fetched_term.value();
  out.entries.reserve(in.entries.size());
  for (const auto& wire : in.entries) {
    if (wire.epoch < epoch || wire.epoch > in.epoch) return invalid("with entry epochs out of order");
    if (wire.kind != int8_t(raft::EntryKind::kNormal) && wire.kind != int8_t(raft::EntryKind::kLeaderChange)) {
      return invalid("with an entry of unknown kind");
    }
    epoch = wire.epoch;
    out.entries.push_back(raft::Entry{Term(wire.epoch), asked.fetch_index + int64_t(out.entries.size()) + 1,
                                      raft::EntryKind(wire.kind), wire.data});
  }
  LogIndex reach = asked.fetch_index + int64_t(out.entries.size());
  if (in.high_watermark < 0 || in.high_watermark > reach.value()) return invalid("with a high watermark beyond it");
  out.commit = LogIndex(in.high_watermark);
  return ok_status();
}

}  // namespace

protocol::SamsaRaftFetchRequest encode_fetch_request(const raft::FetchRequest& r, std::string_view cluster_id) {
  protocol::SamsaRaftFetchRequest request;
  request.cluster_id = std::string(cluster_id);
  request.replica_id = r.from.value();
  request.destination_id = r.to.value();
  request.fetch_offset = r.fetch_index.value();  // our last index = KRaft's end offset
  request.last_fetched_epoch = r.last_fetched_term.value();
  return request;
}

InboundRaftFetch decode_fetch_request(const protocol::SamsaRaftFetchRequest& request, const RaftWireIdentity& me) {
  if (request.cluster_id && *request.cluster_id != me.cluster_id) return refused(ErrorCode::kInconsistentClusterId);
  if (request.destination_id != me.self.value()) return refused(ErrorCode::kInvalidVoterKey);
  // Voters are pushed to (SamsaRaftPush); only an observer pulls.
  if (request.replica_id < 0 || is_voter(me, NodeId(request.replica_id))) {
    return refused(ErrorCode::kInconsistentVoterSet);
  }
  if (request.fetch_offset < 0 || request.last_fetched_epoch < 0 ||
      (request.fetch_offset == 0 && request.last_fetched_epoch != 0)) {
    return refused(ErrorCode::kInvalidRequest);
  }
  InboundRaftFetch out;
  out.request = raft::FetchRequest{NodeId(request.replica_id), me.self, LogIndex(request.fetch_offset),
                                   Term(request.last_fetched_epoch)};
  return out;
}

protocol::SamsaRaftFetchResponse encode_fetch_response(const raft::FetchResponse& answer, ErrorCode error) {
  protocol::SamsaRaftFetchResponse response;
  response.error_code = int16_t(error);
  if (error != ErrorCode::kNone) return response;
  response.kind = int8_t(answer.outcome);
  response.epoch = answer.term.value();
  response.leader_id = answer.leader_hint.value();
  switch (answer.outcome) {
    case FetchOutcome::kEntries: {
      encode_entries(answer.entries, response);
      // Cut entries: never a high watermark past the last one sent.
      int64_t sent = response.entries.size();
      int64_t reach = answer.entries.empty() ? answer.commit.value() : answer.entries.front().index.value() - 1 + sent;
      response.high_watermark = std::min(answer.commit.value(), reach);
      break;
    }
    case FetchOutcome::kDiverging:
      response.diverging_end_offset = answer.diverging_index.value();
      break;
    case FetchOutcome::kSnapshot:
      ASSERT(answer.snapshot);
      response.snapshot_index = answer.snapshot->index.value();
      response.snapshot_epoch = answer.snapshot->term.value();
      response.snapshot_data = answer.snapshot->data;
      break;
    case FetchOutcome::kNotLeader:
      break;
  }
  return response;
}

Result<raft::FetchResponse> decode_fetch_response(const protocol::SamsaRaftFetchResponse& response,
                                                  const raft::FetchRequest& request) {
  if (response.error_code != 0) {
    return Error(ErrorKind::kInvalidArgument, std::string("the voter answered ") + protocol::error_name(response.error_code));
  }
  if (response.epoch < 0 || response.leader_id < -1) return invalid("with a negative epoch or leader");
  raft::FetchResponse out;
  out.from = request.to;
  out.to = request.from;
  out.term = Term(response.epoch);
  out.leader_hint = NodeId(response.leader_id);
  switch (response.kind) {
    case int8_t(FetchOutcome::kEntries):
      out.outcome = FetchOutcome::kEntries;
      RETURN_IF_ERROR(decode_entries(response, request, out));
      return out;
    case int8_t(FetchOutcome::kDiverging):
      out.outcome = FetchOutcome::kDiverging;
      if (response.diverging_end_offset < 0 || response.diverging_end_offset >= request.fetch_index.value()) {
        return invalid("with a divergence not below the offset fetched");
      }
      out.diverging_index = LogIndex(response.diverging_end_offset);
      return out;
    case int8_t(FetchOutcome::kSnapshot):
      out.outcome = FetchOutcome::kSnapshot;
      if (response.snapshot_index < 1 || response.snapshot_epoch < 1 || response.snapshot_epoch > response.epoch) {
        return invalid("with a snapshot of no index or epoch");
      }
      out.snapshot = std::make_shared<raft::Snapshot>(
          raft::Snapshot{LogIndex(response.snapshot_index), Term(response.snapshot_epoch), response.snapshot_data});
      return out;
    case int8_t(FetchOutcome::kNotLeader):
      out.outcome = FetchOutcome::kNotLeader;
      return out;
    default:
      return invalid("of unknown kind " + std::to_string(response.kind));
  }
}

}  // namespace samsa

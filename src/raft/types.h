#pragma once
// Raft vocabulary: strong Term and LogIndex, log entries, the durable hard
// state and snapshots. Plain values; no behaviour beyond comparisons.
//
// Index 0 is the empty-log sentinel: the first real entry has index 1, and a
// log that starts after a snapshot has its "previous" entry at the
// snapshot's index. Term 0 is "no term yet".

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/strong_int.h"
#include "model/ids.h"

namespace samsa::raft {

using Term = StrongInt<struct TermTag, int64_t>;          // KRaft: epoch
using LogIndex = StrongInt<struct LogIndexTag, int64_t>;  // KRaft: offset + 1

inline constexpr Term kNoTerm{0};
inline constexpr LogIndex kNoIndex{0};

enum class EntryKind : uint8_t {
  kNormal = 0,        // an application command
  kLeaderChange = 1,  // appended by every new leader (KRaft LeaderChangeMessage):
                      // lets it commit entries of earlier terms (Raft §5.4.2)
};

struct Entry {
  Term term;
  LogIndex index;
  EntryKind kind = EntryKind::kNormal;
  Bytes data;
  bool operator==(const Entry&) const = default;
};

// What must survive a crash besides the log. Persisted before any message
// that depends on it is sent (a vote is never granted twice in a term).
struct HardState {
  Term term;
  NodeId vote = kNoNode;   // whom we voted for in `term`
  LogIndex commit;         // lets a restarted node re-apply without a leader
  bool operator==(const HardState&) const = default;
};

// A snapshot of the applied state machine covering every entry <= index.
struct Snapshot {
  LogIndex index;
  Term term;  // term of the entry at index
  Bytes data;
};
using SnapshotPtr = std::shared_ptr<const Snapshot>;

// What a node reads back from its disk when it (re)starts.
struct PersistentState {
  HardState hard_state;
  SnapshotPtr snapshot;        // may be null
  std::vector<Entry> entries;  // contiguous, starting after the snapshot
};

}  // namespace samsa::raft

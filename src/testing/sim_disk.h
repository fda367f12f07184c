#pragma once
// SimDisk: a node's simulated disk, as a journal of records (snapshot,
// entries, hard state) with an explicit sync point. A crash keeps everything
// synced, a random prefix of the unsynced writes, and may tear the last one
// it keeps (a real log detects the tear by checksum and truncates it, which
// is what we model). Recovery replays the records with ready.h's rules.

#include <cstddef>
#include <vector>

#include "base/rng.h"
#include "raft/types.h"

namespace samsa::sim {

struct DiskRecord {
  enum class Kind { kSnapshot, kEntries, kHardState };
  Kind kind = Kind::kHardState;
  raft::SnapshotPtr snapshot;
  std::vector<raft::Entry> entries;
  raft::HardState hard_state;
};

class SimDisk {
 public:
  void write(DiskRecord record);
  void sync();
  size_t unsynced() const { return records_.size() - synced_; }
  // Power loss: unsynced writes survive only as a random prefix, the last
  // survivor possibly torn.
  void crash(Rng& rng);
  raft::PersistentState recover() const;
  size_t syncs() const { return syncs_; }
  size_t tears() const { return tears_; }

 private:
  std::vector<DiskRecord> records_;
  size_t synced_ = 0;
  size_t syncs_ = 0;
  size_t tears_ = 0;
};

}  // namespace samsa::sim

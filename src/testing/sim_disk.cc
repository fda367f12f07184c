#include "testing/sim_disk.h"

#include "base/assert.h"

namespace samsa::sim {
namespace {

void apply_snapshot(raft::PersistentState& st, const raft::SnapshotPtr& snap) {
  raft::LogIndex have = st.snapshot ? st.snapshot->index : raft::kNoIndex;
  if (snap->index <= have) return;
  // Keep the entries after it only if our log agrees at its index.
  bool keep = false;
  if (snap->index == have) {
    keep = st.snapshot->term == snap->term;
  } else {
    for (const auto& e : st.entries) {
      if (e.index == snap->index) keep = e.term == snap->term;
    }
  }
  std::vector<raft::Entry> rest;
  if (keep) {
    for (auto& e : st.entries) {
      if (e.index > snap->index) rest.push_back(std::move(e));
    }
  }
  st.entries = std::move(rest);
  st.snapshot = snap;
}

void apply_entries(raft::PersistentState& st, const std::vector<raft::Entry>& entries) {
  if (entries.empty()) return;
  raft::LogIndex first = entries.front().index;
  while (!st.entries.empty() && st.entries.back().index >= first) st.entries.pop_back();
  raft::LogIndex expect = st.entries.empty() ? (st.snapshot ? st.snapshot->index : raft::kNoIndex) + 1
                                             : st.entries.back().index + 1;
  ASSERT_MSG(first == expect, "entries record leaves a gap in the stored log");
  st.entries.insert(st.entries.end(), entries.begin(), entries.end());
}

}  // namespace

void SimDisk::write(DiskRecord record) { records_.push_back(std::move(record)); }

void SimDisk::sync() {
  synced_ = records_.size();
  ++syncs_;
  // Keep the journal short: rewrite it as one equivalent state (an atomic
  // rename in a real store). Only synced data is rewritten.
  if (records_.size() > 64) {
    raft::PersistentState st = recover();
    records_.clear();
    if (st.snapshot) records_.push_back(DiskRecord{DiskRecord::Kind::kSnapshot, st.snapshot, {}, {}});
    if (!st.entries.empty()) records_.push_back(DiskRecord{DiskRecord::Kind::kEntries, nullptr, st.entries, {}});
    records_.push_back(DiskRecord{DiskRecord::Kind::kHardState, nullptr, {}, st.hard_state});
    synced_ = records_.size();
  }
}

void SimDisk::crash(Rng& rng) {
  size_t keep = synced_ + size_t(rng.uniform(unsynced() + 1));
  records_.resize(keep);
  if (keep > synced_ && rng.chance(0.5)) {
    // Tear the last write. Recovery's checksum drops the torn part: for an
    // entries write, the whole entries that made it survive (a prefix).
    DiskRecord& last = records_.back();
    size_t whole = last.kind == DiskRecord::Kind::kEntries ? size_t(rng.uniform(last.entries.size())) : 0;
    if (whole == 0) {
      records_.pop_back();
    } else {
      last.entries.resize(whole);
    }
    ++tears_;
  }
  synced_ = records_.size();
}

raft::PersistentState SimDisk::recover() const {
  raft::PersistentState st;
  for (const DiskRecord& r : records_) {
    switch (r.kind) {
      case DiskRecord::Kind::kSnapshot: apply_snapshot(st, r.snapshot); break;
      case DiskRecord::Kind::kEntries: apply_entries(st, r.entries); break;
      case DiskRecord::Kind::kHardState: st.hard_state = r.hard_state; break;
    }
  }
  return st;
}

}  // namespace samsa::sim

#include "testing/replica_invariants.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/file_region.h"
#include "model/record_batch_header.h"
#include "replication/partition.h"

namespace samsa::sim {
namespace {

constexpr int32_t kReadBytes = 1 << 20;
constexpr size_t kMaxViolations = 20;  // the first few say it all

// Calls fn(header) for each whole batch of `log` from `from` below `until`.
template <typename Fn>
void for_each_batch(Log& log, int64_t from, int64_t until, Fn&& fn) {
  while (from < until && from < log.log_end_offset().value()) {
    auto read = log.read(Offset(from), kReadBytes, Offset(INT64_MAX), true);
    if (!read.ok() || read->records.size == 0) return;
    auto bytes = read_region(read->records);
    if (!bytes.ok()) return;
    const Bytes& b = bytes.value();
    int64_t next = from;
    for (size_t at = 0; at + batch_layout::kHeaderSize <= b.size();) {
      RecordBatchHeader h(b.data() + at);
      if (h.total_size() <= 0 || at + size_t(h.total_size()) > b.size()) break;
      if (h.base_offset().value() >= until) return;
      if (h.last_offset().value() >= from && !fn(h)) return;
      next = h.last_offset().value() + 1;
      at += size_t(h.total_size());
    }
    if (next == from) return;
    from = next;
  }
}

}  // namespace

void ReplicaInvariants::violation(Violation::Kind kind, const Tp& tp, std::string detail) {
  if (violations_.size() >= kMaxViolations) return;
  violations_.push_back(Violation{kind, tp.first + "-" + std::to_string(tp.second),
                                  fmt::format("at {} ms: {}", cluster_.world().now_ms(), detail)});
}

size_t ReplicaInvariants::committed_batches() const {
  size_t n = 0;
  for (const auto& [tp, c] : committed_) n += c.batches.size();
  return n;
}

void ReplicaInvariants::check() {
  for (const Tp& tp : partitions_) check_partition(tp);
  check_images();
}

void ReplicaInvariants::check_partition(const Tp& tp) {
  for (int i = 0; i < cluster_.size(); ++i) {
    Partition* r = cluster_.replica(i, tp.first, tp.second);
    if (!r || !r->is_leader()) continue;
    const int32_t epoch = r->leader_epoch().value();
    auto [it, fresh] = leader_of_epoch_.emplace(std::pair{tp, epoch}, i);
    if (!fresh && it->second != i) {
      violation(Violation::Kind::kTwoLeadersInEpoch, tp,
                fmt::format("node {} leads in leader epoch {}, which node {} led", i + 1, epoch, it->second + 1));
    }
    const int64_t hw = r->high_watermark().value();
    auto key = std::tuple{tp, i, cluster_.world().incarnation(cluster_.host(i)), epoch};
    auto [seen, first] = leader_hw_.emplace(key, hw);
    if (!first) {
      if (hw < seen->second) {
        violation(Violation::Kind::kLeaderWatermarkDecreased, tp,
                  fmt::format("leader node {} in epoch {}: HW {} after {}", i + 1, epoch, hw, seen->second));
      }
      seen->second = std::max(seen->second, hw);
    }
    learn_committed(tp, i, *r);
  }
  for (int i = 0; i < cluster_.size(); ++i) {
    if (Partition* r = cluster_.replica(i, tp.first, tp.second)) compare_replica(tp, i, *r);
  }
}

// The leader's batches below its HW that are not known committed yet are
// committed now. (Should they differ from what another replica holds, that
// replica's comparison says so.)
void ReplicaInvariants::learn_committed(const Tp& tp, int node, Partition& leader) {
  Committed& c = committed_[tp];
  const int64_t hw = leader.high_watermark().value();
  if (hw <= c.end) return;
  for_each_batch(leader.log(), c.end, hw, [&](const RecordBatchHeader& h) {
    if (h.last_offset().value() >= hw) return false;  // a batch is committed whole
    if (h.base_offset().value() != c.end) {
      violation(Violation::Kind::kReplicasDiverge, tp,
                fmt::format("leader node {} has a batch at {} where {} comes next", node + 1,
                            h.base_offset().value(), c.end));
      return false;
    }
    c.batches[c.end] = Batch{h.last_offset().value(), h.partition_leader_epoch().value(), h.crc()};
    c.end = h.last_offset().value() + 1;
    return true;
  });
}

void ReplicaInvariants::compare_replica(const Tp& tp, int node, Partition& replica) {
  const Committed& c = committed_[tp];
  int64_t& judged = compared_to_[{tp, node}];
  const int64_t end = replica.log().log_end_offset().value();
  judged = std::min(judged, end);  // truncated: what comes back is judged again
  // What the replica knows is committed: below its own HW (a follower's
  // comes from its leader's fetch answers, clamped to its log end). Above
  // it a follower may still hold a diverging tail it has not truncated.
  const int64_t known = std::min({c.end, end, replica.high_watermark().value()});
  if (judged >= known) return;
  for_each_batch(replica.log(), judged, known, [&](const RecordBatchHeader& h) {
    const int64_t base = h.base_offset().value();
    auto want = c.batches.find(base);
    if (want == c.batches.end() || want->second.last_offset != h.last_offset().value() ||
        want->second.leader_epoch != h.partition_leader_epoch().value() || want->second.crc != h.crc()) {
      std::string committed = want == c.batches.end()
                                  ? std::string("no batch starts there")
                                  : fmt::format("committed {}..{} epoch {} crc {:08x}", base,
                                                want->second.last_offset, want->second.leader_epoch, want->second.crc);
      violation(Violation::Kind::kReplicasDiverge, tp,
                fmt::format("node {} holds {}..{} epoch {} crc {:08x}; {}", node + 1, base, h.last_offset().value(),
                            h.partition_leader_epoch().value(), h.crc(), committed));
      judged = known;  // reported once
      return false;
    }
    judged = h.last_offset().value() + 1;
    return true;
  });
}

void ReplicaInvariants::check_images() {
  for (int i = 0; i < cluster_.size(); ++i) {
    if (!cluster_.up(i)) continue;
    const MetadataImage& image = cluster_.broker(i).image();
    for (const Tp& tp : partitions_) {
      const PartitionState* p = cluster_.partition_state(i, tp.first, tp.second);
      if (!p || p->leader == kNoNode) continue;
      const BrokerState* b = image.broker(p->leader);
      if (!b || b->fenced) {
        violation(Violation::Kind::kFencedLeader, tp,
                  fmt::format("node {}'s image: leader {} is {}", i + 1, p->leader.value(),
                              b ? "fenced" : "not registered"));
      }
    }
  }
}

}  // namespace samsa::sim

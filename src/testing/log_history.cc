#include "testing/log_history.h"

#include <algorithm>

namespace samsa::sim {

const char* to_string(Violation::Kind kind) {
  switch (kind) {
    case Violation::Kind::kInvented: return "invented";
    case Violation::Kind::kAboveHighWatermark: return "above-high-watermark";
    case Violation::Kind::kGap: return "gap";
    case Violation::Kind::kInconsistent: return "inconsistent";
    case Violation::Kind::kDuplicate: return "duplicate";
    case Violation::Kind::kLostAcknowledged: return "lost-acknowledged";
    case Violation::Kind::kWatermarkDecreased: return "watermark-decreased";
    case Violation::Kind::kCorrupt: return "corrupt";
    case Violation::Kind::kForeign: return "foreign";
    case Violation::Kind::kListOffsets: return "list-offsets";
    case Violation::Kind::kReordered: return "reordered";
    case Violation::Kind::kTopicLost: return "topic-lost";
    case Violation::Kind::kDeletedTopicServed: return "deleted-topic-served";
    case Violation::Kind::kGroupOffsetLost: return "group-offset-lost";
    case Violation::Kind::kGroupOffsetInvented: return "group-offset-invented";
    case Violation::Kind::kReplicasDiverge: return "replicas-diverge";
    case Violation::Kind::kLeaderWatermarkDecreased: return "leader-watermark-decreased";
    case Violation::Kind::kTwoLeadersInEpoch: return "two-leaders-in-epoch";
    case Violation::Kind::kFencedLeader: return "fenced-leader";
  }
  return "?";
}

void LogHistory::violation(Violation::Kind kind, const std::string& partition, std::string detail) {
  violations_.push_back(Violation{kind, partition, std::move(detail)});
}

void LogHistory::sent(const std::string& partition, const std::vector<std::string>& values) {
  Partition& p = partitions_[partition];
  for (const auto& v : values) {
    sent_to_.emplace(v, partition);
    if (p.highest_acknowledged >= 0) p.acknowledged_floor_at_send[v] = p.highest_acknowledged;
  }
}

namespace {
// "topic-p" of a key "topic-p@N" (an incarnation of a re-created topic).
std::string_view name_of(std::string_view key) { return key.substr(0, key.find('@')); }
}  // namespace

bool LogHistory::check_sent_here(const std::string& name, int64_t offset, const std::string& value) {
  auto sent = sent_to_.find(value);
  if (sent == sent_to_.end()) {
    violation(Violation::Kind::kInvented, name, "offset " + std::to_string(offset) + " holds " + value);
    return false;
  }
  if (sent->second == name) return true;
  auto home = partitions_.find(sent->second);
  bool known_there = home != partitions_.end() && home->second.offset_of.count(value);
  if (name_of(sent->second) == name_of(name) && !known_there) return true;  // a late produce by name
  violation(Violation::Kind::kForeign, name,
            "offset " + std::to_string(offset) + " holds " + value + ", sent to " + sent->second +
                (known_there ? " and known there" : ""));
  return false;
}

// "read from 4337, high watermark 4400, line 1234": what a violation's
// detail says of each side.
std::string LogHistory::describe(const Source& source) {
  std::string out = source.how;
  if (source.fetch_offset >= 0) out += " from " + std::to_string(source.fetch_offset);
  if (source.high_watermark >= 0) out += ", high watermark " + std::to_string(source.high_watermark);
  if (source.line > 0) out += ", line " + std::to_string(source.line);
  return out;
}

// Records that `value` is at `offset`, checking it against what is known.
void LogHistory::learn(Partition& p, const std::string& name, int64_t offset, const std::string& value,
                       Source source) {
  source.line = event_line_;
  auto at = p.at_offset.find(offset);
  if (at != p.at_offset.end() && at->second != value) {
    const Known& other = p.offset_of.at(at->second);
    violation(Violation::Kind::kInconsistent, name,
              "offset " + std::to_string(offset) + ": " + value + " (" + describe(source) + "), known as " +
                  at->second + " (" + describe(other.source) + ")");
    return;
  }
  auto where = p.offset_of.find(value);
  if (where != p.offset_of.end() && where->second.offset != offset) {
    violation(Violation::Kind::kDuplicate, name,
              value + " at offset " + std::to_string(offset) + " (" + describe(source) + "), known at offset " +
                  std::to_string(where->second.offset) + " (" + describe(where->second.source) + ")");
    return;
  }
  p.at_offset[offset] = value;
  if (where == p.offset_of.end()) p.offset_of.emplace(value, Known{offset, source});
  if (p.acknowledged_unplaced.erase(value) > 0) p.acknowledged.insert(offset);  // placed now
}

void LogHistory::acknowledged_somewhere(const std::string& partition, const std::vector<std::string>& values) {
  Partition& p = partitions_[partition];
  for (const std::string& value : values) {
    p.acknowledged_floor_at_send.erase(value);  // no offset: no order to judge
    auto known = p.offset_of.find(value);
    if (known != p.offset_of.end()) {
      p.acknowledged.insert(known->second.offset);
    } else {
      p.acknowledged_unplaced.insert(value);
    }
  }
  acknowledged_records_ += values.size();
}

void LogHistory::acknowledged(const std::string& partition, int64_t base_offset,
                              const std::vector<std::string>& values) {
  Partition& p = partitions_[partition];
  for (size_t i = 0; i < values.size(); ++i) {
    int64_t offset = base_offset + int64_t(i);
    learn(p, partition, offset, values[i], Source{"acknowledged"});
    p.acknowledged.insert(offset);
    auto floor = p.acknowledged_floor_at_send.find(values[i]);
    if (floor != p.acknowledged_floor_at_send.end()) {
      if (offset <= floor->second) {
        violation(Violation::Kind::kReordered, partition,
                  values[i] + " acknowledged at offset " + std::to_string(offset) + ", sent after offset " +
                      std::to_string(floor->second) + " was acknowledged");
      }
      p.acknowledged_floor_at_send.erase(floor);
    }
    p.highest_acknowledged = std::max(p.highest_acknowledged, offset);
  }
  acknowledged_records_ += values.size();
}

void LogHistory::check_read(Partition& p, const std::string& name, int64_t fetch_offset, int64_t high_watermark,
                            const std::vector<ReadRecord>& records, const Source& source) {
  int64_t expected = fetch_offset;
  for (const auto& r : records) {
    check_sent_here(name, r.offset, r.value);
    if (r.offset >= high_watermark) {
      violation(Violation::Kind::kAboveHighWatermark, name,
                "offset " + std::to_string(r.offset) + " served with high watermark " +
                    std::to_string(high_watermark));
    }
    // A fetch may start inside a batch: records below the fetch offset are
    // the client's to skip, as Kafka's consumers do.
    if (r.offset < fetch_offset) continue;
    if (r.offset != expected) {
      violation(Violation::Kind::kGap, name,
                "expected offset " + std::to_string(expected) + ", read " + std::to_string(r.offset));
    }
    expected = r.offset + 1;
    learn(p, name, r.offset, r.value, source);
  }
}

int64_t LogHistory::watermark_floor(const std::string& partition) const {
  auto it = partitions_.find(partition);
  if (it == partitions_.end() || lossy_crash_pending()) return 0;
  const Partition& p = it->second;
  int64_t acked_end = p.acknowledged.empty() ? 0 : *p.acknowledged.rbegin() + 1;
  return std::max(p.high_watermark, acked_end);
}

void LogHistory::fetched(const std::string& partition, int64_t fetch_offset, int64_t high_watermark,
                         const std::vector<ReadRecord>& records, std::optional<int64_t> floor_at_send) {
  Partition& p = partitions_[partition];
  check_read(p, partition, fetch_offset, high_watermark, records, Source{"read", fetch_offset, high_watermark});
  if (lossy_crash_pending()) return;
  int64_t floor = floor_at_send.value_or(p.high_watermark);
  if (high_watermark < floor && !watermark_may_regress_) {
    violation(Violation::Kind::kWatermarkDecreased, partition,
              "high watermark " + std::to_string(high_watermark) + " after " + std::to_string(floor) +
                  (floor_at_send ? " was known when the fetch was sent" : ""));
  }
  p.high_watermark = std::max(p.high_watermark, high_watermark);
}

void LogHistory::listed_earliest(const std::string& partition, int64_t offset) {
  if (offset == 0) return;
  violation(Violation::Kind::kListOffsets, partition,
            "earliest offset " + std::to_string(offset) + " (no retention: must be 0)");
}

void LogHistory::listed_latest(const std::string& partition, int64_t floor_at_send, int64_t offset) {
  if (lossy_crash_pending()) return;
  Partition& p = partitions_[partition];
  if (offset < floor_at_send) {
    violation(Violation::Kind::kListOffsets, partition,
              "latest offset " + std::to_string(offset) + " below " + std::to_string(floor_at_send) +
                  ", known when ListOffsets was sent");
  }
  p.high_watermark = std::max(p.high_watermark, offset);
}

void LogHistory::corrupt(const std::string& partition, const std::string& detail) {
  violation(Violation::Kind::kCorrupt, partition, detail);
}

void LogHistory::crashed(CrashKind kind) {
  if (!pending_crash_ || kind == CrashKind::kPowerLoss) pending_crash_ = kind;
}

void LogHistory::forget_from(Partition& p, int64_t offset) {
  for (auto it = p.at_offset.lower_bound(offset); it != p.at_offset.end();) {
    p.offset_of.erase(it->second);
    it = p.at_offset.erase(it);
  }
  p.acknowledged.erase(p.acknowledged.lower_bound(offset), p.acknowledged.end());
  p.high_watermark = std::min(p.high_watermark, offset);
  // Offsets from here on are assigned again: nothing acknowledged above them counts.
  p.highest_acknowledged = std::min(p.highest_acknowledged, offset - 1);
  for (auto& [value, floor] : p.acknowledged_floor_at_send) floor = std::min(floor, offset - 1);
}

void LogHistory::recovered(const std::string& partition, const std::vector<ReadRecord>& log) {
  Partition& p = partitions_[partition];
  int64_t end = log.empty() ? 0 : log.back().offset + 1;
  check_read(p, partition, 0, end, log, Source{"read back whole"});
  bool lossy = pending_crash_ == CrashKind::kPowerLoss && !fsync_every_message_;
  for (auto it = p.acknowledged.lower_bound(end); it != p.acknowledged.end(); ++it) {
    if (lossy) {
      ++lost_allowed_;
    } else {
      const char* after = !pending_crash_                          ? "is missing from a full read"
                          : pending_crash_ == CrashKind::kPowerLoss ? "is gone after a power loss with flush.messages=1"
                                                                    : "is gone after a process crash";
      violation(Violation::Kind::kLostAcknowledged, partition,
                "offset " + std::to_string(*it) + " (" + p.at_offset[*it] + ") " + after);
    }
  }
  // An acknowledged value never placed is not in the log read back whole.
  for (const std::string& value : p.acknowledged_unplaced) {
    if (lossy) {
      ++lost_allowed_;
    } else {
      violation(Violation::Kind::kLostAcknowledged, partition,
                value + " (acknowledged, offset not known) is not in the log read back whole");
    }
  }
  p.acknowledged_unplaced.clear();
  // Above the surviving end, offsets will be assigned again: a new era.
  forget_from(p, end);
  if (pending_crash_ == CrashKind::kPowerLoss) p.high_watermark = std::min(p.high_watermark, end);
}

}  // namespace samsa::sim

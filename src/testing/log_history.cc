#include "testing/log_history.h"

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
  }
  return "?";
}

void LogHistory::violation(Violation::Kind kind, const std::string& partition, std::string detail) {
  violations_.push_back(Violation{kind, partition, std::move(detail)});
}

void LogHistory::sent(const std::string& partition, const std::vector<std::string>& values) {
  (void)partition;
  for (const auto& v : values) sent_.insert(v);
}

// Records that `value` is at `offset`, checking it against what is known.
void LogHistory::learn(Partition& p, const std::string& name, int64_t offset, const std::string& value,
                       const char* how) {
  auto at = p.at_offset.find(offset);
  if (at != p.at_offset.end() && at->second != value) {
    violation(Violation::Kind::kInconsistent, name,
              "offset " + std::to_string(offset) + " " + how + " as " + value + ", known as " + at->second);
    return;
  }
  auto where = p.offset_of.find(value);
  if (where != p.offset_of.end() && where->second != offset) {
    violation(Violation::Kind::kDuplicate, name,
              value + " " + how + " at offset " + std::to_string(offset) + ", known at " +
                  std::to_string(where->second));
    return;
  }
  p.at_offset[offset] = value;
  p.offset_of[value] = offset;
}

void LogHistory::acknowledged(const std::string& partition, int64_t base_offset,
                              const std::vector<std::string>& values) {
  Partition& p = partitions_[partition];
  for (size_t i = 0; i < values.size(); ++i) {
    int64_t offset = base_offset + int64_t(i);
    learn(p, partition, offset, values[i], "acknowledged");
    p.acknowledged.insert(offset);
  }
  acknowledged_records_ += values.size();
}

void LogHistory::check_read(Partition& p, const std::string& name, int64_t fetch_offset, int64_t high_watermark,
                            const std::vector<ReadRecord>& records) {
  int64_t expected = fetch_offset;
  for (const auto& r : records) {
    if (!sent_.count(r.value)) {
      violation(Violation::Kind::kInvented, name, "offset " + std::to_string(r.offset) + " holds " + r.value);
    }
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
    learn(p, name, r.offset, r.value, "read");
  }
}

void LogHistory::fetched(const std::string& partition, int64_t fetch_offset, int64_t high_watermark,
                         const std::vector<ReadRecord>& records) {
  Partition& p = partitions_[partition];
  check_read(p, partition, fetch_offset, high_watermark, records);
  if (high_watermark < p.high_watermark && !p.rewound_by_power_loss) {
    violation(Violation::Kind::kWatermarkDecreased, partition,
              "high watermark " + std::to_string(high_watermark) + " after " + std::to_string(p.high_watermark));
  }
  p.high_watermark = std::max(p.high_watermark, high_watermark);
}

void LogHistory::corrupt(const std::string& partition, const std::string& detail) {
  violation(Violation::Kind::kCorrupt, partition, detail);
}

void LogHistory::crashed(CrashKind kind) {
  if (!pending_crash_ || kind == CrashKind::kPowerLoss) pending_crash_ = kind;
  // The unsynced suffix may be gone, and the watermark with it: consumers
  // still polling can see that before the log is read back.
  if (kind == CrashKind::kPowerLoss && !fsync_every_message_) {
    for (auto& [name, p] : partitions_) p.rewound_by_power_loss = true;
  }
}

void LogHistory::forget_from(Partition& p, int64_t offset) {
  for (auto it = p.at_offset.lower_bound(offset); it != p.at_offset.end();) {
    p.offset_of.erase(it->second);
    it = p.at_offset.erase(it);
  }
  p.acknowledged.erase(p.acknowledged.lower_bound(offset), p.acknowledged.end());
  p.high_watermark = std::min(p.high_watermark, offset);
}

void LogHistory::recovered(const std::string& partition, const std::vector<ReadRecord>& log) {
  Partition& p = partitions_[partition];
  int64_t end = log.empty() ? 0 : log.back().offset + 1;
  check_read(p, partition, 0, end, log);
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
  // Above the surviving end, offsets will be assigned again: a new era.
  forget_from(p, end);
  if (pending_crash_ == CrashKind::kPowerLoss) p.high_watermark = std::min(p.high_watermark, end);
  p.rewound_by_power_loss = false;
}

}  // namespace samsa::sim

#include "testing/group_history.h"

#include <algorithm>

namespace samsa::sim {

void GroupHistory::commit_sent(const std::string& key, int64_t offset, const std::string& metadata) {
  Key& k = keys_[key];
  k.index_of[metadata] = int64_t(k.attempts.size());
  k.attempts.push_back(Attempt{offset, metadata});
}

void GroupHistory::commit_acknowledged(const std::string& key, const std::string& metadata) {
  Key& k = keys_[key];
  auto it = k.index_of.find(metadata);
  if (it == k.index_of.end()) return;  // not sent through commit_sent: the caller's bug, not the broker's
  k.acknowledged = std::max(k.acknowledged, it->second);
  ++acknowledged_;
}

int64_t GroupHistory::fetch_floor(const std::string& key) const {
  auto it = keys_.find(key);
  return it == keys_.end() ? -1 : std::max(it->second.acknowledged, it->second.seen);
}

void GroupHistory::fetched(const std::string& key, int64_t floor_at_send, int64_t offset,
                           const std::string& metadata) {
  Key& k = keys_[key];
  auto describe = [&](int64_t i) {
    return "commit #" + std::to_string(i) + " (offset " + std::to_string(k.attempts[size_t(i)].offset) + ")";
  };
  if (offset < 0) {
    if (floor_at_send >= 0) {
      violation(Violation::Kind::kGroupOffsetLost, key, "no committed offset, after " + describe(floor_at_send));
    }
    return;
  }
  auto it = k.index_of.find(metadata);
  if (it == k.index_of.end() || k.attempts[size_t(it->second)].offset != offset) {
    violation(Violation::Kind::kGroupOffsetInvented, key,
              "offset " + std::to_string(offset) + " with metadata '" + metadata + "' was never committed");
    return;
  }
  if (it->second < floor_at_send) {
    violation(Violation::Kind::kGroupOffsetLost, key, describe(it->second) + " returned after " + describe(floor_at_send));
  }
  k.seen = std::max(k.seen, it->second);
}

void GroupHistory::crashed(CrashKind kind) {
  if (kind == CrashKind::kProcess) return;  // the page cache survives
  for (auto& [name, k] : keys_) {
    if (fsync_every_message_) {
      k.seen = k.acknowledged;
    } else {
      k.seen = k.acknowledged = -1;  // a new era
    }
  }
}

}  // namespace samsa::sim

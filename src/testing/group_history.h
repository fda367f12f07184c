#pragma once
// GroupHistory: the offsets a consumer group committed (OffsetCommit sent,
// acknowledged) and what OffsetFetch answered, judged against the broker's
// promise for committed offsets (docs/testing.md, "What the broker
// promises"). One key per group and partition ("group/topic-p").
//
// Every commit attempt carries a unique metadata string, so an OffsetFetch
// answer names the attempt it comes from. Commits of one key are sent one at
// a time by the partition's owner, and an owner of a later generation
// commits only after the rebalance fenced the earlier one, so attempts take
// effect in the order they were sent.
//
// The rules, each a Violation kind:
// - kGroupOffsetInvented: OffsetFetch returned an offset (with metadata) no
//   commit of that key ever carried.
// - kGroupOffsetLost: OffsetFetch returned nothing, or an attempt older than
//   the floor known when it was sent: the latest acknowledged commit and the
//   latest attempt an earlier answer returned.
//
// Durability (__consumer_offsets is a log like any other, so the same flush
// promise applies): a kill -9 keeps the floor; a power loss with
// flush.messages=1 keeps the acknowledged commits (what was only seen may
// go); a power loss with the default flush policy may lose commits, as a
// suffix of the offsets log: the floor is forgotten (a new era), and what
// OffsetFetch returns must still be a commit that was sent.
//
// Pure: no I/O, no clock; fed in the order events happened.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "testing/log_history.h"

namespace samsa::sim {

class GroupHistory {
 public:
  explicit GroupHistory(bool fsync_every_message) : fsync_every_message_(fsync_every_message) {}

  // An OffsetCommit of `offset` with this (unique) metadata was sent.
  void commit_sent(const std::string& key, int64_t offset, const std::string& metadata);
  // It was acknowledged (error code 0).
  void commit_acknowledged(const std::string& key, const std::string& metadata);
  // What an OffsetFetch sent now must return at least (hand it back).
  int64_t fetch_floor(const std::string& key) const;
  // OffsetFetch answered `offset` (-1: none) with `metadata`.
  void fetched(const std::string& key, int64_t floor_at_send, int64_t offset, const std::string& metadata);
  void crashed(CrashKind kind);

  const std::vector<Violation>& violations() const { return violations_; }
  size_t acknowledged_commits() const { return acknowledged_; }

 private:
  struct Attempt {
    int64_t offset;
    std::string metadata;
  };
  struct Key {
    std::vector<Attempt> attempts;            // in the order sent
    std::map<std::string, int64_t> index_of;  // metadata -> attempt index
    int64_t acknowledged = -1;                // latest acknowledged attempt, this era
    int64_t seen = -1;                        // latest attempt OffsetFetch returned, this era
  };
  void violation(Violation::Kind kind, const std::string& key, std::string detail) {
    violations_.push_back(Violation{kind, key, std::move(detail)});
  }

  bool fsync_every_message_;
  std::map<std::string, Key> keys_;
  std::vector<Violation> violations_;
  size_t acknowledged_ = 0;
};

}  // namespace samsa::sim

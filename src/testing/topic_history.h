#pragma once
// TopicHistory: what clients saw of topics created and deleted at run time
// (CreateTopics, DeleteTopics, and every answer that says whether a topic
// exists), judged against the broker's promises (docs/testing.md, "What the
// broker promises"). Records of each incarnation are LogHistory's (a
// re-created topic is a new partition history there, keyed "topic-p@N").
//
// The rules, each a Violation kind:
// - kDeletedTopicServed: a topic whose deletion was acknowledged (and not
//   created since) answered with anything but UNKNOWN_TOPIC_OR_PARTITION.
// - kTopicLost: a topic whose creation was acknowledged (and not deleted
//   since) answered UNKNOWN_TOPIC_OR_PARTITION, and still did
//   `kLostAfterMs` later: the broker may be opening the partition (a restart,
//   a log created again on the housekeeping tick after a disk fault), but
//   not for ever. Both hold across every crash: a metadata change is
//   acknowledged only once its record is fsynced.
// - kListOffsets: the first ListOffsets of a new incarnation, before anything
//   was produced to it, did not answer earliest = latest = 0 (it starts
//   empty; nothing of the deleted one may be read from it, LogHistory's
//   kForeign).
//
// A create or delete whose answer was lost leaves the topic's existence
// unknown until an acknowledged create or delete settles it. Pure: time
// enters as arguments.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "testing/log_history.h"

namespace samsa::sim {

class TopicHistory {
 public:
  static constexpr int64_t kLostAfterMs = 5000;

  // A CreateTopics or DeleteTopics was sent: until acknowledged, whether the
  // topic exists is unknown.
  void changing(const std::string& topic) { topics_[topic] = State{}; }
  void created(const std::string& topic) { topics_[topic] = State{Exists::kYes}; }
  void deleted(const std::string& topic) { topics_[topic] = State{Exists::kNo}; }
  // Any answer about `topic` (produce, fetch, ListOffsets): `unknown` if it
  // was UNKNOWN_TOPIC_OR_PARTITION.
  void answered(const std::string& topic, bool unknown, int64_t now_ms, const std::string& what);
  // The first ListOffsets of a fresh incarnation (nothing produced to it).
  void listed_fresh(const std::string& partition, int64_t earliest, int64_t latest);

  const std::vector<Violation>& violations() const { return violations_; }

 private:
  enum class Exists { kUnknown, kYes, kNo };
  struct State {
    Exists exists = Exists::kUnknown;
    std::optional<int64_t> unknown_since_ms;  // answering UNKNOWN_TOPIC_OR_PARTITION while kYes
    bool reported = false;                    // kTopicLost said once
  };
  std::map<std::string, State> topics_;
  std::vector<Violation> violations_;
};

}  // namespace samsa::sim

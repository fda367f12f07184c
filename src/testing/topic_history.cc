#include "testing/topic_history.h"

namespace samsa::sim {

void TopicHistory::answered(const std::string& topic, bool unknown, int64_t now_ms, const std::string& what) {
  State& s = topics_[topic];
  if (s.exists == Exists::kNo && !unknown) {
    violations_.push_back(Violation{Violation::Kind::kDeletedTopicServed, topic,
                                    what + " answered for a topic whose deletion was acknowledged"});
    return;
  }
  if (s.exists != Exists::kYes) return;
  if (!unknown) {
    s.unknown_since_ms.reset();
    return;
  }
  if (!s.unknown_since_ms) s.unknown_since_ms = now_ms;
  if (now_ms - *s.unknown_since_ms >= kLostAfterMs && !s.reported) {
    s.reported = true;
    violations_.push_back(Violation{Violation::Kind::kTopicLost, topic,
                                    what + ": UNKNOWN_TOPIC_OR_PARTITION for " +
                                        std::to_string(now_ms - *s.unknown_since_ms) +
                                        " ms after its creation was acknowledged"});
  }
}

void TopicHistory::listed_fresh(const std::string& partition, int64_t earliest, int64_t latest) {
  if (earliest == 0 && latest == 0) return;
  violations_.push_back(Violation{Violation::Kind::kListOffsets, partition,
                                  "a topic just created answers earliest " + std::to_string(earliest) + ", latest " +
                                      std::to_string(latest) + " (must start empty)"});
}

}  // namespace samsa::sim

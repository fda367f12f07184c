// TopicHistory's rules, each shown with a history that breaks it and one
// that does not (docs/testing.md, "What the broker promises").
#include "testing/topic_history.h"

#include <gtest/gtest.h>

namespace samsa::sim {
namespace {

using Kind = Violation::Kind;

std::vector<Kind> kinds(const TopicHistory& h) {
  std::vector<Kind> out;
  for (const auto& v : h.violations()) out.push_back(v.kind);
  return out;
}

TEST(TopicHistory, ADeletedTopicAnswersUnknownTopicOrPartition) {
  TopicHistory h;
  h.created("t");
  h.answered("t", false, 0, "Fetch");
  h.changing("t");
  h.answered("t", false, 1, "Fetch");  // the delete not acknowledged yet: either answer
  h.deleted("t");
  h.answered("t", true, 2, "Fetch");
  EXPECT_TRUE(h.violations().empty());
  h.answered("t", false, 3, "ListOffsets");
  EXPECT_EQ(kinds(h), std::vector<Kind>{Kind::kDeletedTopicServed});
}

TEST(TopicHistory, ACreatedTopicMayBeMissingForAWhileButNotForEver) {
  TopicHistory h;
  h.created("t");
  h.answered("t", true, 1000, "Produce");  // opening after a restart
  h.answered("t", true, 1000 + TopicHistory::kLostAfterMs - 1, "Produce");
  h.answered("t", false, 1000 + TopicHistory::kLostAfterMs, "Produce");
  EXPECT_TRUE(h.violations().empty());
  h.answered("t", true, 10'000, "Fetch");
  h.answered("t", true, 10'000 + TopicHistory::kLostAfterMs, "Fetch");
  h.answered("t", true, 20'000 + TopicHistory::kLostAfterMs, "Fetch");  // said once
  EXPECT_EQ(kinds(h), std::vector<Kind>{Kind::kTopicLost});
}

TEST(TopicHistory, ANewTopicStartsEmpty) {
  TopicHistory h;
  h.listed_fresh("t-0@2", 0, 0);
  EXPECT_TRUE(h.violations().empty());
  h.listed_fresh("t-0@3", 0, 4);
  EXPECT_EQ(kinds(h), std::vector<Kind>{Kind::kListOffsets});
}

}  // namespace
}  // namespace samsa::sim

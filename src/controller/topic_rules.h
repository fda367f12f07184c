#pragma once
// Kafka's rules for topic names and partition counts (Topic.java): shared by
// CreateTopics, auto-creation on Metadata/Produce and the command line.

#include <optional>
#include <string>
#include <string_view>

namespace samsa {

inline constexpr size_t kMaxTopicNameLength = 249;

// nullopt if the name is legal, else the reason (Kafka's wording).
std::optional<std::string> invalid_topic_name_reason(std::string_view name);

// Internal topics are created by the broker itself (e.g. __consumer_offsets).
bool is_internal_topic(std::string_view name);

}  // namespace samsa

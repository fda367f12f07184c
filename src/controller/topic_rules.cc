#include "controller/topic_rules.h"

namespace samsa {

std::optional<std::string> invalid_topic_name_reason(std::string_view name) {
  if (name.empty()) return "Topic name is illegal, it can't be empty";
  if (name == "." || name == "..") return "Topic name cannot be \".\" or \"..\"";
  if (name.size() > kMaxTopicNameLength) {
    return "Topic name is illegal, it can't be longer than " + std::to_string(kMaxTopicNameLength) + " characters";
  }
  for (char c : name) {
    bool legal = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                 c == '_' || c == '-';
    if (!legal) {
      return "Topic name \"" + std::string(name) +
             "\" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'";
    }
  }
  return std::nullopt;
}

bool is_internal_topic(std::string_view name) {
  return name == "__consumer_offsets" || name == "__transaction_state";
}

}  // namespace samsa

#include "cli/json_writer.h"

#include <cstdio>

#include "base/assert.h"

namespace samsa::cli {

std::string json_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (uint8_t(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(uint8_t(c)));
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

void JsonWriter::before_value() {
  if (stack_.empty()) {
    ASSERT_MSG(out_.empty(), "one JSON document per writer");
    return;
  }
  Level& level = stack_.back();
  if (level.object) {
    ASSERT_MSG(level.key_pending, "a value inside a JSON object needs a key");
    level.key_pending = false;
    return;
  }
  if (!level.empty) out_ += ',';
  level.empty = false;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  ASSERT(!stack_.empty() && stack_.back().object && !stack_.back().key_pending);
  Level& level = stack_.back();
  if (!level.empty) out_ += ',';
  level.empty = false;
  level.key_pending = true;
  out_ += '"' + json_escape(name) + "\":";
  return *this;
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  out_ += '{';
  stack_.push_back({true});
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  ASSERT(!stack_.empty() && stack_.back().object && !stack_.back().key_pending);
  stack_.pop_back();
  out_ += '}';
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  before_value();
  out_ += '[';
  stack_.push_back({false});
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  ASSERT(!stack_.empty() && !stack_.back().object);
  stack_.pop_back();
  out_ += ']';
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) {
  before_value();
  out_ += '"' + json_escape(s) + '"';
  return *this;
}

JsonWriter& JsonWriter::value(const std::optional<std::string>& s) {
  return s ? value(std::string_view(*s)) : null();
}

JsonWriter& JsonWriter::value(int64_t n) {
  before_value();
  out_ += std::to_string(n);
  return *this;
}

JsonWriter& JsonWriter::value(bool b) {
  before_value();
  out_ += b ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  out_ += "null";
  return *this;
}

const std::string& JsonWriter::str() const {
  ASSERT_MSG(stack_.empty(), "unclosed JSON container");
  return out_;
}

}  // namespace samsa::cli

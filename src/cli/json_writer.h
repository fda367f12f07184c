#pragma once
// JsonWriter: builds one JSON document into a string, for the tools'
// --json output. Commas are placed by the writer; the caller pairs
// begin/end and gives a key before each value inside an object (checked by
// ASSERT: a mistake is a bug in the tool, not in its input). Strings are
// escaped per RFC 8259 (", \, and control characters as \u00XX).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace samsa::cli {

std::string json_escape(std::string_view s);

class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);
  JsonWriter& value(std::string_view s);
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  JsonWriter& value(const std::optional<std::string>& s);  // null when empty
  JsonWriter& value(int64_t n);
  JsonWriter& value(int32_t n) { return value(int64_t(n)); }
  JsonWriter& value(bool b);
  JsonWriter& null();

  // The document; every container must be closed.
  const std::string& str() const;

 private:
  void before_value();

  struct Level {
    bool object;
    bool empty = true;
    bool key_pending = false;
  };
  std::string out_;
  std::vector<Level> stack_;
};

}  // namespace samsa::cli

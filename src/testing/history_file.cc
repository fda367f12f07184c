#include "testing/history_file.h"

#include <map>
#include <memory>

namespace samsa::sim {
namespace {

// A JSON value, as much of JSON as the history format uses.
struct Json {
  enum class Kind { kNull, kBool, kInt, kFraction, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  int64_t integer = 0;
  std::string string;
  std::vector<Json> array;
  std::map<std::string, Json> object;
};

Error bad(const std::string& why) { return Error(ErrorKind::kCorrupt, why); }

class JsonReader {
 public:
  explicit JsonReader(std::string_view text) : text_(text) {}

  Result<Json> document() {
    Json value;
    if (auto r = parse(value, 0); !r.ok()) return r.error();
    skip_space();
    if (pos_ != text_.size()) return bad("trailing bytes at column " + std::to_string(pos_ + 1));
    return value;
  }

 private:
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\r')) ++pos_;
  }
  bool take(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool take_word(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  Error expected(const char* what) const {
    return bad(std::string("expected ") + what + " at column " + std::to_string(pos_ + 1));
  }

  Status parse(Json& out, int depth) {
    if (depth > kMaxJsonDepth) return bad("nested deeper than " + std::to_string(kMaxJsonDepth));
    skip_space();
    if (pos_ >= text_.size()) return expected("a value");
    char c = text_[pos_];
    if (c == '{') return parse_object(out, depth);
    if (c == '[') return parse_array(out, depth);
    if (c == '"') {
      out.kind = Json::Kind::kString;
      return parse_string(out.string);
    }
    if (c == '-' || (c >= '0' && c <= '9')) return parse_integer(out);
    if (take_word("true")) {
      out.kind = Json::Kind::kBool;
      out.boolean = true;
      return ok_status();
    }
    if (take_word("false")) {
      out.kind = Json::Kind::kBool;
      return ok_status();
    }
    if (take_word("null")) return ok_status();
    return expected("a value");
  }

  Status parse_integer(Json& out) {
    bool negative = text_[pos_] == '-';
    if (negative) ++pos_;
    size_t first = pos_;
    uint64_t magnitude = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      if (pos_ - first >= 18) return bad("number too long at column " + std::to_string(first + 1));
      magnitude = magnitude * 10 + uint64_t(text_[pos_] - '0');
      ++pos_;
    }
    if (pos_ == first) return expected("digits");
    out.kind = Json::Kind::kInt;
    // A fraction or exponent (a timestamp): kept as "not an integer", its
    // value unread, since no judged field is one.
    if (pos_ < text_.size() && text_[pos_] == '.') {
      out.kind = Json::Kind::kFraction;
      if (!skip_digits(++pos_)) return expected("digits after '.'");
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      out.kind = Json::Kind::kFraction;
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (!skip_digits(pos_)) return expected("exponent digits");
    }
    out.integer = negative ? -int64_t(magnitude) : int64_t(magnitude);
    return ok_status();
  }

  // Skips digits from `from` (== pos_); false if there were none.
  bool skip_digits(size_t from) {
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
    return pos_ > from;
  }

  static void append_utf8(std::string& s, uint32_t cp) {
    if (cp < 0x80) {
      s += char(cp);
    } else if (cp < 0x800) {
      s += char(0xC0 | (cp >> 6));
      s += char(0x80 | (cp & 0x3F));
    } else {
      s += char(0xE0 | (cp >> 12));
      s += char(0x80 | ((cp >> 6) & 0x3F));
      s += char(0x80 | (cp & 0x3F));
    }
  }

  Status parse_hex4(uint32_t& cp) {
    if (text_.size() - pos_ < 4) return expected("4 hex digits");
    cp = 0;
    for (int i = 0; i < 4; ++i) {
      char h = text_[pos_++];
      cp <<= 4;
      if (h >= '0' && h <= '9') cp |= uint32_t(h - '0');
      else if (h >= 'a' && h <= 'f') cp |= uint32_t(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') cp |= uint32_t(h - 'A' + 10);
      else return expected("a hex digit");
    }
    return ok_status();
  }

  // Surrogate pairs are kept as two 3-byte sequences: values are compared,
  // never displayed as text, so that is enough.
  Status parse_string(std::string& out) {
    ++pos_;  // the opening quote
    while (pos_ < text_.size()) {
      char c = text_[pos_++];
      if (c == '"') return ok_status();
      if (uint8_t(c) < 0x20) return bad("control character in a string at column " + std::to_string(pos_));
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) break;
      char e = text_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp = 0;
          if (auto r = parse_hex4(cp); !r.ok()) return r;
          append_utf8(out, cp);
          break;
        }
        default: return bad("unknown escape \\" + std::string(1, e) + " at column " + std::to_string(pos_));
      }
    }
    return bad("unterminated string");
  }

  Status parse_array(Json& out, int depth) {
    ++pos_;
    out.kind = Json::Kind::kArray;
    if (take(']')) return ok_status();
    do {
      if (out.array.size() >= kMaxHistoryRecords) return bad("array longer than " + std::to_string(kMaxHistoryRecords));
      out.array.emplace_back();
      if (auto r = parse(out.array.back(), depth + 1); !r.ok()) return r;
    } while (take(','));
    if (!take(']')) return expected("',' or ']'");
    return ok_status();
  }

  Status parse_object(Json& out, int depth) {
    ++pos_;
    out.kind = Json::Kind::kObject;
    if (take('}')) return ok_status();
    do {
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != '"') return expected("a key");
      std::string key;
      if (auto r = parse_string(key); !r.ok()) return r;
      if (!take(':')) return expected("':'");
      if (out.object.count(key)) return bad("duplicate key \"" + key + "\"");
      if (auto r = parse(out.object[key], depth + 1); !r.ok()) return r;
    } while (take(','));
    if (!take('}')) return expected("',' or '}'");
    return ok_status();
  }

  std::string_view text_;
  size_t pos_ = 0;
};

// Field access with the error naming the field.
const Json* field(const Json& object, const char* name) {
  auto it = object.object.find(name);
  return it == object.object.end() ? nullptr : &it->second;
}

Result<std::string> string_field(const Json& o, const char* name) {
  const Json* f = field(o, name);
  if (!f || f->kind != Json::Kind::kString) return bad(std::string("\"") + name + "\" must be a string");
  return f->string;
}

Result<int64_t> offset_field(const Json& o, const char* name) {
  const Json* f = field(o, name);
  if (!f || f->kind != Json::Kind::kInt || f->integer < 0) {
    return bad(std::string("\"") + name + "\" must be an integer >= 0");
  }
  return f->integer;
}

Result<std::vector<std::string>> values_field(const Json& o) {
  const Json* f = field(o, "values");
  if (!f || f->kind != Json::Kind::kArray) return bad("\"values\" must be an array of strings");
  std::vector<std::string> out;
  for (const Json& v : f->array) {
    if (v.kind != Json::Kind::kString) return bad("\"values\" must be an array of strings");
    out.push_back(v.string);
  }
  return out;
}

// "records": [[offset, value], ...]
Result<std::vector<ReadRecord>> records_field(const Json& o) {
  const Json* f = field(o, "records");
  if (!f || f->kind != Json::Kind::kArray) return bad("\"records\" must be an array of [offset, value]");
  std::vector<ReadRecord> out;
  for (const Json& r : f->array) {
    if (r.kind != Json::Kind::kArray || r.array.size() != 2 || r.array[0].kind != Json::Kind::kInt ||
        r.array[0].integer < 0 || r.array[1].kind != Json::Kind::kString) {
      return bad("\"records\" must be an array of [offset, value]");
    }
    out.push_back(ReadRecord{r.array[0].integer, r.array[1].string});
  }
  return out;
}

const std::map<std::string, HistoryEvent::Type>& type_names() {
  using T = HistoryEvent::Type;
  static const std::map<std::string, T> names = {
      {"config", T::kConfig},       {"sent", T::kSent},        {"ack", T::kAck},
      {"error", T::kError},         {"fetch", T::kFetch},      {"full_read", T::kFullRead},
      {"crash", T::kCrash},         {"resumed", T::kResumed},  {"corrupt", T::kCorrupt},
      {"fault", T::kFault},         {"note", T::kNote},
  };
  return names;
}

Status fill(const Json& o, HistoryEvent& e) {
  using T = HistoryEvent::Type;
  auto need_partition = [&]() -> Status {
    auto p = string_field(o, "partition");
    if (!p.ok()) return p.error();
    e.partition = std::move(*p);
    return ok_status();
  };
  switch (e.type) {
    case T::kConfig: {
      const Json* f = field(o, "fsync_every_message");
      if (!f || f->kind != Json::Kind::kBool) return bad("\"fsync_every_message\" must be true or false");
      e.fsync_every_message = f->boolean;
      return ok_status();
    }
    case T::kAck: {
      const Json* f = field(o, "offset");
      e.offset_known = !f || f->kind != Json::Kind::kNull;
      if (e.offset_known) {
        auto offset = offset_field(o, "offset");
        if (!offset.ok()) return offset.error();
        e.offset = *offset;
      }
      [[fallthrough]];
    }
    case T::kSent:
    case T::kError: {
      if (auto r = need_partition(); !r.ok()) return r;
      auto values = values_field(o);
      if (!values.ok()) return values.error();
      e.values = std::move(*values);
      return ok_status();
    }
    case T::kFetch: {
      auto offset = offset_field(o, "offset");
      if (!offset.ok()) return offset.error();
      e.offset = *offset;
      const Json* hw = field(o, "high_watermark");
      if (hw && hw->kind == Json::Kind::kInt && hw->integer >= 0) {
        e.high_watermark = hw->integer;
      } else if (!hw || hw->kind != Json::Kind::kNull) {
        return bad("\"high_watermark\" must be an integer >= 0 or null");
      }
      [[fallthrough]];
    }
    case T::kFullRead: {
      if (auto r = need_partition(); !r.ok()) return r;
      auto records = records_field(o);
      if (!records.ok()) return records.error();
      e.records = std::move(*records);
      return ok_status();
    }
    case T::kCrash: {
      auto kind = string_field(o, "kind");
      if (!kind.ok()) return kind.error();
      if (*kind == "process") e.crash_kind = CrashKind::kProcess;
      else if (*kind == "power_loss") e.crash_kind = CrashKind::kPowerLoss;
      else return bad("crash \"kind\" must be \"process\" or \"power_loss\"");
      return ok_status();
    }
    case T::kCorrupt: {
      if (auto r = need_partition(); !r.ok()) return r;
      auto detail = string_field(o, "detail");
      if (!detail.ok()) return detail.error();
      e.detail = std::move(*detail);
      return ok_status();
    }
    case T::kResumed:
    case T::kFault:
    case T::kNote: return ok_status();
  }
  return ok_status();
}

}  // namespace

Result<HistoryEvent> parse_history_line(std::string_view line) {
  if (line.size() > kMaxHistoryLineBytes) return bad("line longer than " + std::to_string(kMaxHistoryLineBytes));
  auto json = JsonReader(line).document();
  if (!json.ok()) return json.error();
  if (json->kind != Json::Kind::kObject) return bad("a line must be a JSON object");
  auto type = string_field(*json, "type");
  if (!type.ok()) return type.error();
  auto it = type_names().find(*type);
  if (it == type_names().end()) return bad("unknown event type \"" + *type + "\"");
  HistoryEvent event;
  event.type = it->second;
  if (auto r = fill(*json, event); !r.ok()) return r.error();
  return event;
}

void apply_history_event(const HistoryEvent& e, LogHistory& history) {
  using T = HistoryEvent::Type;
  switch (e.type) {
    case T::kSent: history.sent(e.partition, e.values); break;
    case T::kAck:
      if (e.offset_known) {
        history.acknowledged(e.partition, e.offset, e.values);
      } else {
        history.acknowledged_somewhere(e.partition, e.values);
      }
      break;
    case T::kFetch: {
      int64_t end = e.records.empty() ? e.offset : std::max(e.offset, e.records.back().offset + 1);
      history.fetched(e.partition, e.offset, e.high_watermark.value_or(end), e.records);
      break;
    }
    case T::kFullRead: history.recovered(e.partition, e.records); break;
    case T::kCrash: history.crashed(e.crash_kind); break;
    case T::kResumed: history.resumed(); break;
    case T::kCorrupt: history.corrupt(e.partition, e.detail); break;
    case T::kConfig:
    case T::kError:
    case T::kFault:
    case T::kNote: break;
  }
}

Result<HistoryVerdict> check_history(std::string_view text) {
  std::unique_ptr<LogHistory> history;
  HistoryVerdict verdict;
  size_t line_number = 0;
  while (!text.empty()) {
    size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    auto event = parse_history_line(line);
    if (!event.ok()) return bad("line " + std::to_string(line_number) + ": " + event.error().message());
    if (event->type == HistoryEvent::Type::kConfig) {
      if (history) return bad("line " + std::to_string(line_number) + ": \"config\" must be the first event");
      history = std::make_unique<LogHistory>(event->fsync_every_message);
    }
    if (!history) history = std::make_unique<LogHistory>(false);
    history->set_event_source(line_number);  // a violation names the lines to look at
    apply_history_event(*event, *history);
    ++verdict.events;
  }
  if (history) {
    verdict.violations = history->violations();
    verdict.acknowledged_records = history->acknowledged_records();
  }
  return verdict;
}

}  // namespace samsa::sim

#include "base/config_def.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace samsa {
namespace {

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

bool iequals(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

template <typename T>
bool parse_integer(const std::string& s, T* out) {
  // Java's parseInt/parseLong: optional sign, then decimal digits only.
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (b != e && *b == '+') ++b;
  if (b == e || (*b == '+')) return false;
  auto [p, ec] = std::from_chars(b, e, *out);
  return ec == std::errc() && p == e;
}

std::vector<std::string> split_list(const std::string& trimmed) {
  std::vector<std::string> out;
  if (trimmed.empty()) return out;
  size_t start = 0;
  for (;;) {
    size_t comma = trimmed.find(',', start);
    out.push_back(trim(trimmed.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string format_number(double v) {
  if (std::floor(v) == v && std::fabs(v) < 1e18) return fmt::format("{}", int64_t(v));
  return fmt::format("{}", v);
}

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += sep;
    out += items[i];
  }
  return out;
}

// The validator's complaint, or "" if the value passes.
std::string check(const ConfigValidator& v, const ConfigValue& value) {
  if (std::holds_alternative<std::monostate>(value)) return "";
  if (v.min || v.max) {
    double n;
    if (auto* i = std::get_if<int32_t>(&value)) {
      n = double(*i);
    } else if (auto* l = std::get_if<int64_t>(&value)) {
      n = double(*l);
    } else if (auto* d = std::get_if<double>(&value)) {
      n = *d;
    } else {
      return "";
    }
    if (v.min && n < *v.min) return "Value must be at least " + format_number(*v.min);
    if (v.max && n > *v.max) return "Value must be no more than " + format_number(*v.max);
  }
  if (!v.one_of.empty()) {
    auto allowed = [&](const std::string& s) {
      return std::any_of(v.one_of.begin(), v.one_of.end(),
                         [&](const std::string& a) { return v.case_insensitive ? iequals(a, s) : a == s; });
    };
    std::string complaint = "String must be one of: " + join(v.one_of, ", ");
    if (auto* s = std::get_if<std::string>(&value)) return allowed(*s) ? "" : complaint;
    if (auto* list = std::get_if<std::vector<std::string>>(&value)) {
      for (const auto& s : *list) {
        if (!allowed(s)) return complaint;
      }
    }
  }
  return "";
}

Error invalid(const std::string& name, const std::string& value, const std::string& why) {
  return Error(ErrorKind::kInvalidArgument, "Invalid value " + value + " for configuration " + name + ": " + why);
}

}  // namespace

const char* to_string(ConfigType type) {
  switch (type) {
    case ConfigType::kBoolean: return "BOOLEAN";
    case ConfigType::kInt: return "INT";
    case ConfigType::kLong: return "LONG";
    case ConfigType::kDouble: return "DOUBLE";
    case ConfigType::kString: return "STRING";
    case ConfigType::kList: return "LIST";
    case ConfigType::kPassword: return "PASSWORD";
  }
  return "?";
}

const char* to_string(ConfigSource source) {
  switch (source) {
    case ConfigSource::kUnknown: return "UNKNOWN";
    case ConfigSource::kDynamicTopic: return "DYNAMIC_TOPIC_CONFIG";
    case ConfigSource::kDynamicBroker: return "DYNAMIC_BROKER_CONFIG";
    case ConfigSource::kDynamicDefaultBroker: return "DYNAMIC_DEFAULT_BROKER_CONFIG";
    case ConfigSource::kStaticBroker: return "STATIC_BROKER_CONFIG";
    case ConfigSource::kDefault: return "DEFAULT_CONFIG";
  }
  return "?";
}

Result<ConfigValue> parse_config_value(ConfigType type, const std::string& trimmed) {
  auto fail = [&](const char* why) { return Error(ErrorKind::kInvalidArgument, why); };
  switch (type) {
    case ConfigType::kBoolean:
      if (iequals(trimmed, "true")) return ConfigValue(true);
      if (iequals(trimmed, "false")) return ConfigValue(false);
      return fail("Expected value to be either true or false");
    case ConfigType::kInt: {
      int32_t v;
      if (!parse_integer(trimmed, &v)) return fail("Not a number of type INT");
      return ConfigValue(v);
    }
    case ConfigType::kLong: {
      int64_t v;
      if (!parse_integer(trimmed, &v)) return fail("Not a number of type LONG");
      return ConfigValue(v);
    }
    case ConfigType::kDouble: {
      char* end = nullptr;
      double v = trimmed.empty() ? 0 : std::strtod(trimmed.c_str(), &end);
      if (trimmed.empty() || end != trimmed.c_str() + trimmed.size() || std::isnan(v)) {
        return fail("Not a number of type DOUBLE");
      }
      return ConfigValue(v);
    }
    case ConfigType::kString:
    case ConfigType::kPassword:
      return ConfigValue(trimmed);
    case ConfigType::kList:
      return ConfigValue(split_list(trimmed));
  }
  UNREACHABLE("bad ConfigType");
}

ConfigDef& ConfigDef::define(ConfigKey key) {
  ASSERT_MSG(index_.count(key.name) == 0, key.name.c_str());
  auto entry = parse_entry(key, key.default_value, ConfigSource::kDefault);
  ASSERT_MSG(entry.ok() || key.required, entry.ok() ? "" : entry.error().message().c_str());
  index_.emplace(key.name, keys_.size());
  keys_.push_back(std::move(key));
  return *this;
}

const ConfigKey* ConfigDef::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &keys_[it->second];
}

Result<ConfigValues::Entry> ConfigDef::parse_entry(const ConfigKey& key, const std::optional<std::string>& raw,
                                                   ConfigSource source) const {
  ConfigValues::Entry e{key.type, std::monostate{}, std::nullopt, source, key.type == ConfigType::kPassword};
  if (!raw) {
    if (key.required) {
      return Error(ErrorKind::kInvalidArgument,
                   "Missing required configuration \"" + key.name + "\" which has no default value.");
    }
    return e;
  }
  std::string trimmed = trim(*raw);
  auto value = parse_config_value(key.type, trimmed);
  if (!value.ok()) return invalid(key.name, *raw, value.error().message());
  std::string complaint = check(key.validator, *value);
  if (!complaint.empty()) return invalid(key.name, e.sensitive ? "[hidden]" : trimmed, complaint);
  e.value = std::move(value).value();
  e.raw = trimmed;
  return e;
}

Result<ConfigValues> ConfigDef::parse(const std::map<std::string, std::string>& props, ConfigSource source) const {
  ConfigValues out;
  for (const auto& key : keys_) {
    auto it = props.find(key.name);
    bool given = it != props.end();
    ASSIGN_OR_RETURN(auto entry, parse_entry(key, given ? std::optional(it->second) : key.default_value,
                                             given ? source : ConfigSource::kDefault));
    out.entries_.emplace(key.name, std::move(entry));
  }
  for (const auto& [name, value] : props) {
    if (index_.count(name) == 0) out.unknown_.push_back(name);
  }
  return out;
}

Result<ConfigValues> ConfigDef::parse_over(const ConfigValues& base, const std::map<std::string, std::string>& props,
                                           ConfigSource source) const {
  ConfigValues out = base;
  out.unknown_.clear();
  for (const auto& [name, value] : props) {
    const ConfigKey* key = find(name);
    if (key == nullptr) {
      out.unknown_.push_back(name);
      continue;
    }
    ASSIGN_OR_RETURN(auto entry, parse_entry(*key, value, source));
    out.entries_[name] = std::move(entry);
  }
  // Keys this def has but `base` lacks (base from another def): defaults.
  for (const auto& key : keys_) {
    if (out.entries_.count(key.name) == 0) {
      ASSIGN_OR_RETURN(auto entry, parse_entry(key, key.default_value, ConfigSource::kDefault));
      out.entries_.emplace(key.name, std::move(entry));
    }
  }
  return out;
}

Status ConfigDef::validate(const std::string& name, const std::string& value) const {
  const ConfigKey* key = find(name);
  if (key == nullptr) return Error(ErrorKind::kNotFound, "Unknown configuration " + name);
  auto entry = parse_entry(*key, value, ConfigSource::kUnknown);
  if (!entry.ok()) return entry.error();
  return ok_status();
}

// --- ConfigValues -----------------------------------------------------------

const ConfigValues::Entry& ConfigValues::entry(const std::string& name) const {
  auto it = entries_.find(name);
  ASSERT_MSG(it != entries_.end(), name.c_str());
  return it->second;
}

const ConfigValues::Entry& ConfigValues::typed(const std::string& name, ConfigType a, ConfigType b) const {
  const Entry& e = entry(name);
  ASSERT_MSG(e.type == a || e.type == b, name.c_str());
  return e;
}

bool ConfigValues::is_null(const std::string& name) const {
  return std::holds_alternative<std::monostate>(entry(name).value);
}

bool ConfigValues::get_bool(const std::string& name) const {
  const Entry& e = typed(name, ConfigType::kBoolean, ConfigType::kBoolean);
  ASSERT_MSG(!is_null(name), name.c_str());
  return std::get<bool>(e.value);
}

int32_t ConfigValues::get_int(const std::string& name) const {
  const Entry& e = typed(name, ConfigType::kInt, ConfigType::kInt);
  ASSERT_MSG(!is_null(name), name.c_str());
  return std::get<int32_t>(e.value);
}

int64_t ConfigValues::get_long(const std::string& name) const {
  const Entry& e = typed(name, ConfigType::kLong, ConfigType::kLong);
  ASSERT_MSG(!is_null(name), name.c_str());
  return std::get<int64_t>(e.value);
}

double ConfigValues::get_double(const std::string& name) const {
  const Entry& e = typed(name, ConfigType::kDouble, ConfigType::kDouble);
  ASSERT_MSG(!is_null(name), name.c_str());
  return std::get<double>(e.value);
}

const std::string& ConfigValues::get_string(const std::string& name) const {
  const Entry& e = typed(name, ConfigType::kString, ConfigType::kPassword);
  ASSERT_MSG(!is_null(name), name.c_str());
  return std::get<std::string>(e.value);
}

const std::vector<std::string>& ConfigValues::get_list(const std::string& name) const {
  const Entry& e = typed(name, ConfigType::kList, ConfigType::kList);
  ASSERT_MSG(!is_null(name), name.c_str());
  return std::get<std::vector<std::string>>(e.value);
}

std::optional<int32_t> ConfigValues::get_optional_int(const std::string& name) const {
  if (is_null(name)) return std::nullopt;
  return get_int(name);
}

std::optional<int64_t> ConfigValues::get_optional_long(const std::string& name) const {
  if (is_null(name)) return std::nullopt;
  return get_long(name);
}

std::optional<std::string> ConfigValues::describe_value(const std::string& name) const {
  const Entry& e = entry(name);
  if (e.sensitive) return std::nullopt;
  if (auto* list = std::get_if<std::vector<std::string>>(&e.value)) return join(*list, ",");
  return e.raw;
}

std::map<std::string, std::string> ConfigValues::overrides() const {
  std::map<std::string, std::string> out;
  for (const auto& [name, e] : entries_) {
    if (e.source != ConfigSource::kDefault && e.raw) out.emplace(name, *e.raw);
  }
  return out;
}

}  // namespace samsa

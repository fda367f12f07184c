#pragma once
// ConfigDef: a typed registry of configuration keys, Kafka-style. Used for
// the broker's server.properties keys and for per-topic configs alike.
//
// A ConfigDef lists keys {name, type, default, validator, importance, doc}.
// parse() turns string properties (from a file, the command line, or a
// CreateTopics/AlterConfigs request) into ConfigValues: every defined key with
// a typed value (or null), its string form, and where it came from (default or
// the given source). Unknown keys are kept aside so the caller can warn.
// Invalid values fail with Kafka's wording:
//   "Invalid value abc for configuration num.partitions: Not a number of type INT"
//
// Parsing follows Kafka's ConfigDef: values are trimmed; BOOLEAN is
// true/false (any case); INT/LONG are decimal integers in range; LIST is
// comma-separated with blanks around commas ignored ("" = empty list);
// PASSWORD is kept verbatim and reported as sensitive.
// Not thread-safe for mutation; a built ConfigDef/ConfigValues is read-only.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "base/result.h"

namespace samsa {

enum class ConfigType { kBoolean, kInt, kLong, kDouble, kString, kList, kPassword };
enum class ConfigImportance { kHigh, kMedium, kLow };

// Where a value came from. Numbered like Kafka's DescribeConfigs
// ConfigSource so that the protocol layer can send the number as is.
enum class ConfigSource : int8_t {
  kUnknown = 0,
  kDynamicTopic = 1,          // DYNAMIC_TOPIC_CONFIG
  kDynamicBroker = 2,         // DYNAMIC_BROKER_CONFIG
  kDynamicDefaultBroker = 3,  // DYNAMIC_DEFAULT_BROKER_CONFIG
  kStaticBroker = 4,          // STATIC_BROKER_CONFIG (server.properties, --override)
  kDefault = 5,               // DEFAULT_CONFIG
};

const char* to_string(ConfigType type);  // "INT", "LONG", ... (Kafka's names)
const char* to_string(ConfigSource source);

// A validator: none, a numeric range (either end optional), or a set of
// allowed strings (for LIST: each element must be one of them).
struct ConfigValidator {
  std::optional<double> min;
  std::optional<double> max;
  std::vector<std::string> one_of;
  bool case_insensitive = false;  // for one_of

  static ConfigValidator none() { return {}; }
  static ConfigValidator at_least(double lo) { return {lo, std::nullopt, {}}; }
  static ConfigValidator between(double lo, double hi) { return {lo, hi, {}}; }
  static ConfigValidator in(std::vector<std::string> allowed) { return {std::nullopt, std::nullopt, std::move(allowed)}; }
};

struct ConfigKey {
  std::string name;
  ConfigType type = ConfigType::kString;
  // String form of the default. nullopt: the value is null unless set, or,
  // with `required`, parse() fails when it is not set.
  std::optional<std::string> default_value;
  bool required = false;
  ConfigValidator validator;
  ConfigImportance importance = ConfigImportance::kMedium;
  std::string doc;
};

// A typed value: null, or one of the types above (PASSWORD and STRING are
// std::string, LIST is a vector of strings).
using ConfigValue = std::variant<std::monostate, bool, int32_t, int64_t, double, std::string, std::vector<std::string>>;

class ConfigValues {
 public:
  struct Entry {
    ConfigType type;
    ConfigValue value;
    std::optional<std::string> raw;  // string form as given (trimmed); nullopt for null
    ConfigSource source;
    bool sensitive;
  };

  // Typed accessors. The key must be defined with that type and, except for
  // is_null(), have a non-null value: asking otherwise is a bug (ASSERT).
  bool get_bool(const std::string& name) const;
  int32_t get_int(const std::string& name) const;
  int64_t get_long(const std::string& name) const;
  double get_double(const std::string& name) const;
  const std::string& get_string(const std::string& name) const;  // STRING or PASSWORD
  const std::vector<std::string>& get_list(const std::string& name) const;
  bool is_null(const std::string& name) const;
  std::optional<int32_t> get_optional_int(const std::string& name) const;
  std::optional<int64_t> get_optional_long(const std::string& name) const;

  bool contains(const std::string& name) const { return entries_.count(name) != 0; }
  const Entry& entry(const std::string& name) const;
  ConfigSource source(const std::string& name) const { return entry(name).source; }
  bool is_default(const std::string& name) const { return source(name) == ConfigSource::kDefault; }
  // The value as DescribeConfigs shows it (nullopt for null or sensitive).
  std::optional<std::string> describe_value(const std::string& name) const;

  // Every defined key, sorted by name.
  const std::map<std::string, Entry>& entries() const { return entries_; }
  // Keys given that the ConfigDef does not define, sorted.
  const std::vector<std::string>& unknown_keys() const { return unknown_; }
  // Only the keys whose source is not kDefault, as strings (for persisting
  // topic overrides, or showing what was set).
  std::map<std::string, std::string> overrides() const;

 private:
  friend class ConfigDef;
  const Entry& typed(const std::string& name, ConfigType a, ConfigType b) const;
  std::map<std::string, Entry> entries_;
  std::vector<std::string> unknown_;
};

class ConfigDef {
 public:
  // Adds a key; defining a name twice is a bug. Defaults are checked when the
  // key is defined (an invalid default is a bug).
  ConfigDef& define(ConfigKey key);

  const ConfigKey* find(const std::string& name) const;
  const std::vector<ConfigKey>& keys() const { return keys_; }

  // Values for every key: those in `props` come from `source`, the others
  // from their default.
  Result<ConfigValues> parse(const std::map<std::string, std::string>& props,
                             ConfigSource source = ConfigSource::kStaticBroker) const;
  // Like parse(), but keys not in `props` keep `base`'s value and source.
  // Layering: topic defaults (from the broker) under a topic's overrides.
  Result<ConfigValues> parse_over(const ConfigValues& base, const std::map<std::string, std::string>& props,
                                  ConfigSource source) const;
  // Checks one value as parse() would (AlterConfigs validate_only).
  Status validate(const std::string& name, const std::string& value) const;

 private:
  Result<ConfigValues::Entry> parse_entry(const ConfigKey& key, const std::optional<std::string>& raw,
                                          ConfigSource source) const;
  std::vector<ConfigKey> keys_;
  std::map<std::string, size_t> index_;
};

// Kafka's parse of one value, exposed for tests and for callers that need a
// lone conversion. Errors name neither key nor value (parse() adds them).
Result<ConfigValue> parse_config_value(ConfigType type, const std::string& trimmed);

}  // namespace samsa

#include "base/config_def.h"

#include <gtest/gtest.h>

namespace samsa {
namespace {

ConfigDef sample_def() {
  ConfigDef def;
  def.define({.name = "num.partitions", .type = ConfigType::kInt, .default_value = "1",
              .validator = ConfigValidator::at_least(1), .doc = "partitions"});
  def.define({.name = "log.retention.bytes", .type = ConfigType::kLong, .default_value = "-1"});
  def.define({.name = "log.retention.ms", .type = ConfigType::kLong});  // null by default
  def.define({.name = "auto.create.topics.enable", .type = ConfigType::kBoolean, .default_value = "true"});
  def.define({.name = "min.cleanable.ratio", .type = ConfigType::kDouble, .default_value = "0.5",
              .validator = ConfigValidator::between(0, 1)});
  def.define({.name = "compression.type", .type = ConfigType::kString, .default_value = "producer",
              .validator = ConfigValidator::in({"uncompressed", "gzip", "producer"})});
  def.define({.name = "cleanup.policy", .type = ConfigType::kList, .default_value = "delete",
              .validator = ConfigValidator::in({"delete", "compact"})});
  def.define({.name = "ssl.key.password", .type = ConfigType::kPassword});
  return def;
}

TEST(ConfigDef, DefaultsWhenNothingIsGiven) {
  auto v = sample_def().parse({});
  ASSERT_TRUE(v.ok()) << v.error().to_string();
  EXPECT_EQ(v->get_int("num.partitions"), 1);
  EXPECT_EQ(v->get_long("log.retention.bytes"), -1);
  EXPECT_TRUE(v->is_null("log.retention.ms"));
  EXPECT_EQ(v->get_optional_long("log.retention.ms"), std::nullopt);
  EXPECT_TRUE(v->get_bool("auto.create.topics.enable"));
  EXPECT_DOUBLE_EQ(v->get_double("min.cleanable.ratio"), 0.5);
  EXPECT_EQ(v->get_string("compression.type"), "producer");
  EXPECT_EQ(v->get_list("cleanup.policy"), (std::vector<std::string>{"delete"}));
  EXPECT_TRUE(v->is_default("num.partitions"));
  EXPECT_EQ(v->source("num.partitions"), ConfigSource::kDefault);
  EXPECT_TRUE(v->unknown_keys().empty());
  EXPECT_TRUE(v->overrides().empty());
}

TEST(ConfigDef, GivenValuesAreTypedTrimmedAndSourced) {
  auto v = sample_def().parse({{"num.partitions", " 12 "},
                               {"log.retention.ms", "604800000"},
                               {"auto.create.topics.enable", "FALSE"},
                               {"cleanup.policy", " compact , delete "},
                               {"ssl.key.password", "s3cret"},
                               {"made.up.key", "x"}},
                              ConfigSource::kStaticBroker);
  ASSERT_TRUE(v.ok()) << v.error().to_string();
  EXPECT_EQ(v->get_int("num.partitions"), 12);
  EXPECT_EQ(v->get_long("log.retention.ms"), 604800000);
  EXPECT_FALSE(v->get_bool("auto.create.topics.enable"));
  EXPECT_EQ(v->get_list("cleanup.policy"), (std::vector<std::string>{"compact", "delete"}));
  EXPECT_EQ(v->describe_value("cleanup.policy"), "compact,delete");
  EXPECT_EQ(v->describe_value("num.partitions"), "12");
  EXPECT_EQ(v->get_string("ssl.key.password"), "s3cret");
  EXPECT_EQ(v->describe_value("ssl.key.password"), std::nullopt);  // sensitive
  EXPECT_EQ(v->source("num.partitions"), ConfigSource::kStaticBroker);
  EXPECT_EQ(v->source("log.retention.bytes"), ConfigSource::kDefault);
  EXPECT_EQ(v->unknown_keys(), (std::vector<std::string>{"made.up.key"}));
  EXPECT_EQ(v->overrides().at("num.partitions"), "12");
  EXPECT_EQ(v->overrides().count("log.retention.bytes"), 0u);
}

TEST(ConfigDef, InvalidValuesNameKeyAndValueInKafkasWords) {
  ConfigDef def = sample_def();
  auto expect_error = [&](std::string key, std::string value, std::string message) {
    auto v = def.parse({{key, value}});
    ASSERT_FALSE(v.ok()) << key << "=" << value;
    EXPECT_EQ(v.error().message(), message);
    EXPECT_EQ(v.error().kind(), ErrorKind::kInvalidArgument);
  };
  expect_error("num.partitions", "abc",
               "Invalid value abc for configuration num.partitions: Not a number of type INT");
  expect_error("num.partitions", "0", "Invalid value 0 for configuration num.partitions: Value must be at least 1");
  expect_error("num.partitions", "3000000000",
               "Invalid value 3000000000 for configuration num.partitions: Not a number of type INT");
  expect_error("num.partitions", "1.5",
               "Invalid value 1.5 for configuration num.partitions: Not a number of type INT");
  expect_error("log.retention.bytes", "12x",
               "Invalid value 12x for configuration log.retention.bytes: Not a number of type LONG");
  expect_error("auto.create.topics.enable", "yes",
               "Invalid value yes for configuration auto.create.topics.enable: Expected value to be either true "
               "or false");
  expect_error("min.cleanable.ratio", "1.5",
               "Invalid value 1.5 for configuration min.cleanable.ratio: Value must be no more than 1");
  expect_error("min.cleanable.ratio", "half",
               "Invalid value half for configuration min.cleanable.ratio: Not a number of type DOUBLE");
  expect_error("compression.type", "brotli",
               "Invalid value brotli for configuration compression.type: String must be one of: uncompressed, "
               "gzip, producer");
  expect_error("cleanup.policy", "delete,shred",
               "Invalid value delete,shred for configuration cleanup.policy: String must be one of: delete, "
               "compact");
}

TEST(ConfigDef, IntegerEdgeCasesFollowJava) {
  EXPECT_TRUE(parse_config_value(ConfigType::kInt, "+5").ok());
  EXPECT_TRUE(parse_config_value(ConfigType::kInt, "-2147483648").ok());
  EXPECT_FALSE(parse_config_value(ConfigType::kInt, "2147483648").ok());
  EXPECT_FALSE(parse_config_value(ConfigType::kInt, "").ok());
  EXPECT_FALSE(parse_config_value(ConfigType::kInt, "++5").ok());
  EXPECT_FALSE(parse_config_value(ConfigType::kInt, "0x10").ok());
  EXPECT_TRUE(parse_config_value(ConfigType::kLong, "9223372036854775807").ok());
  EXPECT_FALSE(parse_config_value(ConfigType::kLong, "9223372036854775808").ok());
  auto empty_list = parse_config_value(ConfigType::kList, "");
  ASSERT_TRUE(empty_list.ok());
  EXPECT_TRUE(std::get<std::vector<std::string>>(*empty_list).empty());
}

TEST(ConfigDef, RequiredKeyMissingFails) {
  ConfigDef def;
  def.define({.name = "node.id", .type = ConfigType::kInt, .required = true});
  auto v = def.parse({});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().message(), "Missing required configuration \"node.id\" which has no default value.");
  auto ok = def.parse({{"node.id", "3"}});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->get_int("node.id"), 3);
}

TEST(ConfigDef, ParseOverLayersTopicOverridesOnBrokerDefaults) {
  ConfigDef def = sample_def();
  auto broker = def.parse({{"num.partitions", "3"}}, ConfigSource::kStaticBroker);
  ASSERT_TRUE(broker.ok());
  auto topic = def.parse_over(*broker, {{"log.retention.bytes", "1000"}}, ConfigSource::kDynamicTopic);
  ASSERT_TRUE(topic.ok());
  EXPECT_EQ(topic->get_int("num.partitions"), 3);
  EXPECT_EQ(topic->source("num.partitions"), ConfigSource::kStaticBroker);
  EXPECT_EQ(topic->get_long("log.retention.bytes"), 1000);
  EXPECT_EQ(topic->source("log.retention.bytes"), ConfigSource::kDynamicTopic);
  EXPECT_EQ(topic->source("compression.type"), ConfigSource::kDefault);
  auto bad = def.parse_over(*broker, {{"log.retention.bytes", "lots"}}, ConfigSource::kDynamicTopic);
  EXPECT_FALSE(bad.ok());
}

TEST(ConfigDef, ValidateChecksOneValue) {
  ConfigDef def = sample_def();
  EXPECT_TRUE(def.validate("num.partitions", "4").ok());
  EXPECT_FALSE(def.validate("num.partitions", "-4").ok());
  EXPECT_EQ(def.validate("nope", "1").error().kind(), ErrorKind::kNotFound);
  ASSERT_NE(def.find("num.partitions"), nullptr);
  EXPECT_EQ(def.find("num.partitions")->doc, "partitions");
  EXPECT_EQ(def.find("nope"), nullptr);
  EXPECT_STREQ(to_string(ConfigSource::kDynamicTopic), "DYNAMIC_TOPIC_CONFIG");
  EXPECT_EQ(int(ConfigSource::kDefault), 5);
}

}  // namespace
}  // namespace samsa

#include "cli/arg_parser.h"

#include <gtest/gtest.h>

namespace samsa::cli {
namespace {

struct Fixture {
  std::string topic;
  int64_t count = 7;
  bool flag = false;
  std::vector<std::string> props;
  ArgParser parser{"samsa test", "A test command."};

  Fixture() {
    parser.add_string("topic", 't', "TOPIC", "topic", &topic);
    parser.add_int("count", "N", "count", &count, 1, 100);
    parser.add_flag("flag", 0, "flag", &flag);
    parser.add_list("property", 'X', "K=V", "prop", &props);
  }
};

TEST(ArgParser, ParsesAllForms) {
  Fixture f;
  ASSERT_EQ(f.parser.parse({"--topic", "a", "--count=5", "--flag", "-X", "x=1", "--property", "y=2"}),
            ParseOutcome::kOk);
  EXPECT_EQ(f.topic, "a");
  EXPECT_EQ(f.count, 5);
  EXPECT_TRUE(f.flag);
  EXPECT_EQ(f.props, (std::vector<std::string>{"x=1", "y=2"}));
}

TEST(ArgParser, DefaultsSurviveWhenAbsent) {
  Fixture f;
  ASSERT_EQ(f.parser.parse({"-t", "b"}), ParseOutcome::kOk);
  EXPECT_EQ(f.topic, "b");
  EXPECT_EQ(f.count, 7);
  EXPECT_FALSE(f.flag);
}

TEST(ArgParser, RejectsBadInput) {
  Fixture f;
  EXPECT_EQ(f.parser.parse({"--nope"}), ParseOutcome::kError);
  EXPECT_EQ(f.parser.error(), "unknown option '--nope'");
  EXPECT_EQ(f.parser.parse({"--count", "0"}), ParseOutcome::kError);
  EXPECT_EQ(f.parser.error(), "--count must be between 1 and 100, got 0");
  EXPECT_EQ(f.parser.parse({"--count", "5x"}), ParseOutcome::kError);
  EXPECT_EQ(f.parser.parse({"--topic"}), ParseOutcome::kError);
  EXPECT_EQ(f.parser.error(), "option '--topic' needs a value");
  EXPECT_EQ(f.parser.parse({"--flag=1"}), ParseOutcome::kError);
  EXPECT_EQ(f.parser.parse({"stray"}), ParseOutcome::kError);
}

TEST(ArgParser, RequiredAndHelp) {
  Fixture f;
  f.parser.require("topic");
  EXPECT_EQ(f.parser.parse({"--flag"}), ParseOutcome::kError);
  EXPECT_EQ(f.parser.error(), "missing required option --topic");
  std::string help = f.parser.help();
  EXPECT_NE(help.find("Usage: samsa test [options]"), std::string::npos);
  EXPECT_NE(help.find("-t, --topic TOPIC"), std::string::npos);
  EXPECT_NE(help.find("(required)"), std::string::npos);
  EXPECT_NE(help.find("(repeatable)"), std::string::npos);
  testing::internal::CaptureStdout();
  EXPECT_EQ(f.parser.parse({"--help"}), ParseOutcome::kHelp);
  EXPECT_EQ(testing::internal::GetCapturedStdout(), help);
}

}  // namespace
}  // namespace samsa::cli

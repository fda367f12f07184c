#include "config/properties.h"

#include <gtest/gtest.h>

namespace samsa {
namespace {

TEST(Properties, KafkaSampleShapes) {
  auto p = parse_properties(
      "# comment\n"
      "  ! also a comment\n"
      "\n"
      "node.id=1\n"
      "process.roles = broker,controller\n"
      "listeners:PLAINTEXT://127.0.0.1:9092\n"
      "log.dirs   ./data\n"
      "empty.value=\n"
      "bare.key\n"
      "trailing = kept  \n");
  EXPECT_EQ(p.at("node.id"), "1");
  EXPECT_EQ(p.at("process.roles"), "broker,controller");
  EXPECT_EQ(p.at("listeners"), "PLAINTEXT://127.0.0.1:9092");
  EXPECT_EQ(p.at("log.dirs"), "./data");
  EXPECT_EQ(p.at("empty.value"), "");
  EXPECT_EQ(p.at("bare.key"), "");
  EXPECT_EQ(p.at("trailing"), "kept  ");  // Java keeps trailing blanks; ConfigDef trims
  EXPECT_EQ(p.size(), 7u);
}

TEST(Properties, ContinuationsAndLineEnds) {
  auto p = parse_properties("a=one,\\\n    two,\\\r\n\tthree\r\nb=x\rc=y\\\\\nd=z\\");
  EXPECT_EQ(p.at("a"), "one,two,three");
  EXPECT_EQ(p.at("b"), "x");
  EXPECT_EQ(p.at("c"), "y\\");  // even number of backslashes: no continuation
  EXPECT_EQ(p.at("d"), "z");
}

TEST(Properties, Escapes) {
  auto p = parse_properties("key\\=with\\:seps\\ sp = v\\tal\\u00e9\\n\\#x\n");
  ASSERT_EQ(p.count("key=with:seps sp"), 1u);
  EXPECT_EQ(p.at("key=with:seps sp"), "v\tal\xc3\xa9\n#x");
}

TEST(Properties, LaterDefinitionWins) {
  auto p = parse_properties("a=1\na=2\n");
  EXPECT_EQ(p.at("a"), "2");
}

TEST(Properties, MissingFileIsAnError) {
  auto r = load_properties_file("/nonexistent/samsa/server.properties");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("/nonexistent/samsa/server.properties"), std::string::npos);
}

TEST(Properties, ShippedSampleConfigParses) {
  // Tests run from the source root (see cmake/samsa.cmake).
  auto r = load_properties_file("config/server.properties");
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->at("node.id"), "1");
  EXPECT_EQ(r->at("listeners"), "PLAINTEXT://127.0.0.1:9092");
  EXPECT_EQ(r->at("log.dirs"), "./data");
}

}  // namespace
}  // namespace samsa

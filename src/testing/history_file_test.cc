// The chaos suite's JSONL histories (docs/testing.md, "History files"): each
// event type parses into what LogHistory is fed, malformed lines are errors
// naming the line, and a whole history is judged like the simulator's.
#include "testing/history_file.h"

#include <gtest/gtest.h>

namespace samsa::sim {
namespace {

using Type = HistoryEvent::Type;

HistoryEvent parsed(std::string_view line) {
  auto e = parse_history_line(line);
  EXPECT_TRUE(e.ok()) << line << ": " << (e.ok() ? "" : e.error().message());
  return e.ok() ? *e : HistoryEvent{};
}

std::string error_of(std::string_view line) {
  auto e = parse_history_line(line);
  return e.ok() ? "(parsed)" : e.error().message();
}

TEST(HistoryFile, ParsesEveryEventType) {
  EXPECT_TRUE(parsed(R"({"type":"config","fsync_every_message":true})").fsync_every_message);

  HistoryEvent sent = parsed(R"({"type":"sent","partition":"t-0","values":["p1-0","p1-1"],"time":1.5})");
  EXPECT_EQ(sent.type, Type::kSent);
  EXPECT_EQ(sent.partition, "t-0");
  EXPECT_EQ(sent.values, (std::vector<std::string>{"p1-0", "p1-1"}));

  HistoryEvent ack = parsed(R"({"type":"ack","partition":"t-0","offset":7,"values":["p1-0"]})");
  EXPECT_EQ(ack.type, Type::kAck);
  EXPECT_EQ(ack.offset, 7);

  HistoryEvent fetch =
      parsed(R"( { "type" : "fetch", "partition":"t-0", "offset":3, "high_watermark":9, "records":[[3,"a"],[4,"b\"c"]] } )");
  EXPECT_EQ(fetch.type, Type::kFetch);
  EXPECT_EQ(fetch.offset, 3);
  EXPECT_EQ(fetch.high_watermark, std::optional<int64_t>(9));
  ASSERT_EQ(fetch.records.size(), 2u);
  EXPECT_EQ(fetch.records[1].offset, 4);
  EXPECT_EQ(fetch.records[1].value, "b\"c");

  EXPECT_EQ(parsed(R"({"type":"fetch","partition":"t-0","offset":0,"high_watermark":null,"records":[]})")
                .high_watermark,
            std::nullopt);
  EXPECT_EQ(parsed(R"({"type":"full_read","partition":"t-0","records":[[0,"a"]]})").type, Type::kFullRead);
  EXPECT_EQ(parsed(R"({"type":"crash","kind":"power_loss"})").crash_kind, CrashKind::kPowerLoss);
  EXPECT_EQ(parsed(R"({"type":"crash","kind":"process"})").crash_kind, CrashKind::kProcess);
  EXPECT_EQ(parsed(R"({"type":"resumed"})").type, Type::kResumed);
  EXPECT_EQ(parsed(R"({"type":"error","partition":"t-0","values":["x"],"error":"timed out"})").type, Type::kError);
  EXPECT_EQ(parsed(R"({"type":"corrupt","partition":"t-0","detail":"crc"})").detail, "crc");
  EXPECT_EQ(parsed(R"({"type":"fault","what":"sigstop","pid":12,"seconds":2})").type, Type::kFault);
  EXPECT_EQ(parsed(R"({"type":"note","what":"consumer error","error":"transport"})").type, Type::kNote);
}

TEST(HistoryFile, StringEscapesDecode) {
  HistoryEvent e = parsed(R"({"type":"sent","partition":"t\/0","values":["a\\b\n\u0041\u00e9"]})");
  EXPECT_EQ(e.partition, "t/0");
  EXPECT_EQ(e.values.at(0), "a\\b\nA\xC3\xA9");
}

TEST(HistoryFile, MalformedLinesAreErrorsNotCrashes) {
  EXPECT_NE(error_of(R"({"type":"ack","partition":"t-0","values":["a"]})").find("offset"), std::string::npos);
  EXPECT_NE(error_of(R"({"type":"ack","partition":"t-0","offset":-1,"values":["a"]})").find("offset"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"type":"teleport"})").find("unknown event type"), std::string::npos);
  EXPECT_NE(error_of(R"({"type":"sent","partition":"t-0","values":[1]})").find("values"), std::string::npos);
  EXPECT_NE(error_of(R"({"type":"fetch","partition":"t-0","offset":0,"high_watermark":1,"records":[[0]]})")
                .find("records"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"type":"crash","kind":"meteor"})").find("kind"), std::string::npos);
  EXPECT_NE(error_of(R"({"type":"resumed","type":"resumed"})").find("duplicate key"), std::string::npos);
  EXPECT_NE(error_of(R"({"type":"ack","partition":"t-0","offset":1.5,"values":[]})").find("offset"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"type":"ack","partition":"t-0","offset":12345678901234567890,"values":[]})")
                .find("too long"),
            std::string::npos);
  EXPECT_NE(error_of("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[").find("deeper"), std::string::npos);
  EXPECT_NE(error_of(R"({"type":"resumed","time":1.})").find("digits"), std::string::npos);
  EXPECT_TRUE(parse_history_line(R"({"type":"resumed","time":-1.25e+3})").ok());
  EXPECT_NE(error_of(R"({"type":"resumed"} x)").find("trailing"), std::string::npos);
  EXPECT_NE(error_of(R"(["type"])").find("object"), std::string::npos);
  // Every prefix of a valid line is an error, not a crash or a parse.
  std::string line = R"({"type":"fetch","partition":"t-0","offset":3,"high_watermark":9,"records":[[3,"a\u00e9"]]})";
  for (size_t n = 0; n < line.size(); ++n) EXPECT_FALSE(parse_history_line(line.substr(0, n)).ok()) << n;
}

TEST(HistoryFile, CleanHistoryHasNoViolations) {
  auto verdict = check_history(R"({"type":"config","fsync_every_message":false}
{"type":"sent","partition":"t-0","values":["a","b"]}
{"type":"ack","partition":"t-0","offset":0,"values":["a","b"]}

{"type":"crash","kind":"process"}
{"type":"full_read","partition":"t-0","records":[[0,"a"],[1,"b"]]}
{"type":"resumed"}
{"type":"fetch","partition":"t-0","offset":0,"high_watermark":2,"records":[[0,"a"],[1,"b"]]}
)");
  ASSERT_TRUE(verdict.ok()) << verdict.error().message();
  EXPECT_TRUE(verdict->violations.empty());
  EXPECT_EQ(verdict->events, 7u);
  EXPECT_EQ(verdict->acknowledged_records, 2u);
}

TEST(HistoryFile, AcknowledgedRecordMissingAfterAProcessCrashIsLost) {
  auto verdict = check_history(R"({"type":"sent","partition":"t-0","values":["a","b"]}
{"type":"ack","partition":"t-0","offset":0,"values":["a","b"]}
{"type":"crash","kind":"process"}
{"type":"full_read","partition":"t-0","records":[[0,"a"]]}
{"type":"resumed"})");
  ASSERT_TRUE(verdict.ok());
  ASSERT_EQ(verdict->violations.size(), 1u);
  EXPECT_EQ(verdict->violations[0].kind, Violation::Kind::kLostAcknowledged);
}

// The chaos suite's run 1000 of session 10: librdkafka's idempotent producer
// reported values persisted with no offset (confluent-kafka: offset() None).
TEST(HistoryFile, AnAcknowledgementWithoutAnOffsetMustBeFoundInTheFinalRead) {
  const char* acked = R"({"type":"sent","partition":"t-0","values":["a","b"]}
{"type":"ack","partition":"t-0","offset":null,"values":["a"]}
{"type":"ack","partition":"t-0","offset":0,"values":["b"]}
)";
  auto kept = check_history(std::string(acked) + R"({"type":"full_read","partition":"t-0","records":[[0,"b"],[1,"a"]]})");
  ASSERT_TRUE(kept.ok()) << kept.error().message();
  EXPECT_TRUE(kept->violations.empty());
  EXPECT_EQ(kept->acknowledged_records, 2u);
  auto lost = check_history(std::string(acked) + R"({"type":"full_read","partition":"t-0","records":[[0,"b"]]})");
  ASSERT_TRUE(lost.ok());
  ASSERT_EQ(lost->violations.size(), 1u);
  EXPECT_EQ(lost->violations[0].kind, Violation::Kind::kLostAcknowledged);
  EXPECT_NE(lost->violations[0].detail.find("a (acknowledged, offset not known)"), std::string::npos);
}

TEST(HistoryFile, NullHighWatermarkJudgesNothingAboveTheRead) {
  auto verdict = check_history(R"({"type":"sent","partition":"t-0","values":["a"]}
{"type":"fetch","partition":"t-0","offset":0,"high_watermark":null,"records":[[0,"a"]]}
{"type":"fetch","partition":"t-0","offset":1,"high_watermark":null,"records":[]})");
  ASSERT_TRUE(verdict.ok());
  EXPECT_TRUE(verdict->violations.empty());
}

// The chaos suite's duplicate (issue 16): the detail says how and where
// each side was learnt, so the two events can be found in the history.
TEST(HistoryFile, ADuplicateNamesBothSidesWithTheirLines) {
  auto verdict = check_history(R"({"type":"sent","partition":"t-0","values":["a","v"]}
{"type":"ack","partition":"t-0","offset":1,"values":["v"]}
{"type":"note","what":"leaders"}
{"type":"fetch","partition":"t-0","offset":0,"high_watermark":5,"records":[[0,"v"]]})");
  ASSERT_TRUE(verdict.ok());
  ASSERT_EQ(verdict->violations.size(), 1u);
  EXPECT_EQ(verdict->violations[0].kind, Violation::Kind::kDuplicate);
  EXPECT_EQ(verdict->violations[0].detail,
            "v at offset 0 (read from 0, high watermark 5, line 4), known at offset 1 (acknowledged, line 2)");
}

TEST(HistoryFile, AnInconsistentOffsetNamesBothSidesWithTheirLines) {
  auto verdict = check_history(R"({"type":"sent","partition":"t-0","values":["a","b"]}
{"type":"fetch","partition":"t-0","offset":0,"high_watermark":1,"records":[[0,"a"]]}
{"type":"full_read","partition":"t-0","records":[[0,"b"]]})");
  ASSERT_TRUE(verdict.ok());
  ASSERT_EQ(verdict->violations.size(), 1u);
  EXPECT_EQ(verdict->violations[0].detail,
            "offset 0: b (read back whole, line 3), known as a (read from 0, high watermark 1, line 2)");
}

TEST(HistoryFile, ParseErrorNamesTheLine) {
  auto verdict = check_history("{\"type\":\"resumed\"}\n{\"type\":\"config\",\"fsync_every_message\":false}\n");
  ASSERT_FALSE(verdict.ok());
  EXPECT_NE(verdict.error().message().find("line 2"), std::string::npos);
  EXPECT_NE(verdict.error().message().find("first"), std::string::npos);
  EXPECT_NE(check_history("{\"type\":\"resumed\"}\n{\"type\":\n").error().message().find("line 2"),
            std::string::npos);
}

}  // namespace
}  // namespace samsa::sim

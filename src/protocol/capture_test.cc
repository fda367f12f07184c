// Byte-exact checks against real Kafka wire captures (KafkaJS's fixtures,
// copied into tests/data/kafka-captures: see its README). Each
// request/response body is decoded with our definitions at the file's
// version, must be consumed completely, and must re-encode to the identical
// bytes. RECORDS fields are compared raw.

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "model/test_captures.h"
#include "protocol/codec_test_support.h"
#include "protocol/generated/apis.h"

namespace samsa::protocol::testing {
namespace {

namespace fs = std::filesystem;

using samsa::testing::kCapturesDir;
using samsa::testing::load_capture_file;

const CodecCase* find_case(const std::string& name) {
  for (const CodecCase& c : codec_cases()) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

std::string dir_name(const char* api) {
  std::string s = api;
  s[0] = char(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

// Captures whose exact re-encoding is impossible for a principled reason,
// with what we assert instead.
enum class Expect { kExact, kFailsToDecode };
const std::map<std::string, std::pair<Expect, const char*>> kExceptions = {
    {"apiVersions/v1_response_missing_throttle_time.json",
     {Expect::kFailsToDecode,
      "an old broker's v1 response without ThrottleTimeMs: not a valid v1 body; "
      "the body is checked as v0 instead below"}},
};

struct Stats {
  int files = 0;
  int exact = 0;
  int labelled_v0 = 0;  // consumer subscriptions checked as v0, see below
};

void check_file(const fs::path& file, const std::string& api, Stats& stats) {
  const std::string rel = file.parent_path().filename().string() + "/" + file.filename().string();
  static const std::regex kMessage(R"(v(\d+)_(?:[A-Za-z_]*_)?(request|response)(_.*)?\.json(\.json)?)");
  static const std::regex kConsumerData(R"(v\d+_(memberAssignment|memberMetadata|assignerMetadata)\.json)");
  std::smatch m;
  const std::string fname = file.filename().string();
  Bytes bytes;
  ASSERT_TRUE(load_capture_file(file, &bytes));
  if (std::regex_match(fname, m, kConsumerData)) {
    // Consumer protocol payloads: int16 version, then the struct.
    const bool assignment = m[1] == "memberAssignment";
    const CodecCase* c = find_case(assignment ? "ConsumerProtocolAssignment" : "ConsumerProtocolSubscription");
    ASSERT_NE(c, nullptr);
    ASSERT_GE(bytes.size(), 2u);
    int16_t version = int16_t(load_be16(bytes.data()));
    Bytes out;
    ByteView body(bytes.data() + 2, bytes.size() - 2);
    if (!assignment && version >= 1) {
      // KafkaJS labels its subscription version 1 but writes the v0 layout
      // (no OwnedPartitions), so it is not a valid v1 body (Java's consumer
      // rejects it too); the bytes are an exact v0 subscription.
      EXPECT_NE(c->reencode(body, version, &out), "") << rel;
      version = 0;
      ++stats.labelled_v0;
    }
    ASSERT_EQ(c->reencode(body, version, &out), "") << rel;
    EXPECT_TRUE(std::equal(out.begin(), out.end(), body.begin(), body.end())) << rel;
    ++stats.exact;
    return;
  }
  ASSERT_TRUE(std::regex_match(fname, m, kMessage)) << "unrecognized capture " << rel;
  const int16_t version = int16_t(std::stoi(m[1]));
  const std::string name = api + (m[2] == "request" ? "Request" : "Response");
  const CodecCase* c = find_case(name);
  ASSERT_NE(c, nullptr) << name;
  Bytes out;
  std::string err = c->reencode(bytes, version, &out);
  auto ex = kExceptions.find(rel);
  if (ex != kExceptions.end() && ex->second.first == Expect::kFailsToDecode) {
    EXPECT_NE(err, "") << rel << ": " << ex->second.second;
    return;
  }
  ASSERT_EQ(err, "") << rel << " (" << bytes.size() << " bytes)";
  EXPECT_EQ(out, bytes) << rel << ": re-encoding differs";
  ++stats.exact;
}

TEST(CaptureTest, DecodeAndReencodeByteExact) {
  ASSERT_TRUE(fs::is_directory(kCapturesDir)) << "captures not found at " << fs::absolute(kCapturesDir)
                                            << " (tests run from the repository root)";
  Stats stats;
  int dirs = 0;
  for (const ApiInfo& api : all_apis()) {
    fs::path dir = kCapturesDir / dir_name(api.name);
    if (!fs::is_directory(dir)) continue;  // no capture of this API exists
    ++dirs;
    std::set<fs::path> files{fs::directory_iterator(dir), fs::directory_iterator()};
    for (const fs::path& file : files) {
      SCOPED_TRACE(file.string());
      ++stats.files;
      check_file(file, api.name, stats);
    }
  }
  EXPECT_EQ(stats.labelled_v0, 3);
  // Directories we have definitions for: apiVersions alterConfigs
  // createPartitions createTopics deleteRecords deleteTopics describeConfigs
  // describeGroups fetch findCoordinator heartbeat initProducerId joinGroup
  // leaveGroup listOffsets metadata offsetCommit offsetFetch produce syncGroup.
  EXPECT_EQ(dirs, 20);
  EXPECT_GE(stats.files, 160);
  EXPECT_EQ(stats.exact + int(kExceptions.size()), stats.files);
}

// The v1 ApiVersions answer of an old broker that omits ThrottleTimeMs is a
// valid v0 body (error code + api keys): check it byte-exact as v0.
TEST(CaptureTest, ApiVersionsWithoutThrottleTimeIsV0Body) {
  Bytes bytes;
  ASSERT_TRUE(load_capture_file(kCapturesDir / "apiVersions" / "v1_response_missing_throttle_time.json", &bytes));
  const CodecCase* c = find_case("ApiVersionsResponse");
  ASSERT_NE(c, nullptr);
  Bytes out;
  ASSERT_EQ(c->reencode(bytes, 0, &out), "");
  EXPECT_EQ(out, bytes);
}

}  // namespace
}  // namespace samsa::protocol::testing

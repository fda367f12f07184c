#pragma once
// Test-only: loads captured Kafka bytes (KafkaJS's Buffer JSON files,
// {"type":"Buffer","data":[1,2,...]}) from tests/data/kafka-captures in the
// repository (its README says where they come from). Use it as
//   Bytes cap;
//   ASSERT_TRUE(load_capture("fetch/v4_response.json", &cap));
// so a missing, unreadable or malformed file fails the test with the path
// and the reason.

#include <gtest/gtest.h>

#include <cstddef>
#include <filesystem>
#include <string>

#include "base/bytes.h"
#include "base/test_files.h"

namespace samsa::testing {

inline const std::filesystem::path kCapturesDir = "tests/data/kafka-captures";

// Parses the byte array of a Node.js Buffer in JSON: the "data" member, a
// list of integers 0..255 (blanks allowed around commas).
inline ::testing::AssertionResult parse_buffer_json(const std::string& text, Bytes* out) {
  size_t pos = text.find("\"data\"");
  if (pos != std::string::npos) pos = text.find_first_not_of(" \t\r\n:", pos + 6);
  if (pos == std::string::npos || text[pos] != '[') return ::testing::AssertionFailure() << "no \"data\":[ array";
  const size_t close = text.find(']', pos);
  if (close == std::string::npos) return ::testing::AssertionFailure() << "unterminated \"data\" array";
  out->clear();
  int value = -1;  // -1: no digit since the last comma
  for (size_t i = pos + 1; i < close; ++i) {
    const char c = text[i];
    if (c >= '0' && c <= '9') {
      value = (value < 0 ? 0 : value * 10) + (c - '0');
      if (value > 255) return ::testing::AssertionFailure() << "byte value above 255 at offset " << i;
    } else if (c == ',') {
      if (value < 0) return ::testing::AssertionFailure() << "empty element at offset " << i;
      out->push_back(uint8_t(value));
      value = -1;
    } else if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
      return ::testing::AssertionFailure() << "unexpected character '" << c << "' at offset " << i;
    }
  }
  if (value >= 0) out->push_back(uint8_t(value));
  return ::testing::AssertionSuccess();
}

// Reads a capture file given by its full path (directory walks).
inline ::testing::AssertionResult load_capture_file(const std::filesystem::path& path, Bytes* out) {
  std::string text;
  ::testing::AssertionResult read = read_repo_file(path, &text);
  if (!read) return read;
  ::testing::AssertionResult parsed = parse_buffer_json(text, out);
  if (!parsed) return ::testing::AssertionFailure() << shown_path(path) << ": " << parsed.message();
  return parsed;
}

// Reads tests/data/kafka-captures/<relative>.
inline ::testing::AssertionResult load_capture(const std::string& relative, Bytes* out) {
  return load_capture_file(kCapturesDir / relative, out);
}

// The RECORDS field found at `offset` of a captured response: the int32 size
// before it must equal `size` (the offsets were found by walking the
// response with its schema once; the size check guards against drift).
inline ByteView capture_records(const Bytes& capture, size_t offset, size_t size) {
  if (offset < 4 || offset + size > capture.size()) return {};
  if (load_be32(capture.data() + offset - 4) != size) return {};
  return ByteView(capture).subspan(offset, size);
}

}  // namespace samsa::testing

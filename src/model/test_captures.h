#pragma once
// Test-only: loads captured Kafka bytes (KafkaJS's Buffer JSON files,
// {"type":"Buffer","data":[1,2,...]}) from ../shared/kafka-protocol/captures,
// relative to the repo root where ctest runs the unit tests.

#include <cstdio>
#include <string>

#include "base/bytes.h"

namespace samsa::testing {

inline Bytes load_capture(const std::string& relative) {
  std::string path = "../shared/kafka-protocol/captures/" + relative;
  Bytes out;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return out;
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  std::fclose(f);
  size_t pos = text.find("\"data\":[");
  if (pos == std::string::npos) return out;
  pos += 8;
  int value = -1;
  for (; pos < text.size() && text[pos] != ']'; ++pos) {
    char c = text[pos];
    if (c >= '0' && c <= '9') {
      value = (value < 0 ? 0 : value * 10) + (c - '0');
    } else if (value >= 0) {
      out.push_back(uint8_t(value));
      value = -1;
    }
  }
  if (value >= 0) out.push_back(uint8_t(value));
  return out;
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

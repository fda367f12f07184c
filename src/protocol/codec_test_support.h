#pragma once
// Test-only helpers shared by src/protocol/*_test.cc and the generated sample
// builders (build dir: protocol_samples.cc). Not part of the library API.

#include <string>
#include <vector>

#include "base/byte_reader.h"
#include "base/bytes.h"
#include "base/out_buffer.h"
#include "protocol/codec.h"
#include "protocol/uuid.h"

namespace samsa::protocol::testing {

template <typename T>
Bytes encode_to_bytes(const T& m, int16_t version) {
  OutBuffer out;
  Encoder w(out);
  m.encode(w, version);
  return out.bytes();
}

// Encode, decode (all bytes consumed), compare, re-encode (same bytes).
// Returns "" on success, else what went wrong.
template <typename T>
std::string check_round_trip(const T& a, int16_t version) {
  Bytes first = encode_to_bytes(a, version);
  T b;
  ByteReader r(first);
  if (!b.decode(r, version)) return "decode failed";
  if (!r.at_end()) return "decode left " + std::to_string(r.remaining()) + " bytes";
  if (!(a == b)) return "decoded value differs";
  if (encode_to_bytes(b, version) != first) return "re-encoding differs";
  return "";
}

// Decodes `in` (which must be consumed completely) and encodes it again into
// *out (when out is not null). Returns "" on success.
template <typename T>
std::string reencode(ByteView in, int16_t version, Bytes* out) {
  T m;
  ByteReader r(in);
  if (!m.decode(r, version)) return "decode failed";
  if (!r.at_end()) return "decode left " + std::to_string(r.remaining()) + " bytes";
  if (out) *out = encode_to_bytes(m, version);
  return "";
}

// Decodes as the broker does (Request::decode: bytes after the body are not
// an error) and encodes the result into *out. *consumed: the bytes decoded.
// Returns false if `in` does not decode.
template <typename T>
bool decode_prefix(ByteView in, int16_t version, size_t* consumed, Bytes* out) {
  T m;
  ByteReader r(in);
  if (!m.decode(r, version) || !r.ok()) return false;
  *consumed = r.position();
  *out = encode_to_bytes(m, version);
  return true;
}

inline std::string sample_string(int k) { return "s" + std::to_string(k); }
inline Bytes sample_bytes(int k) { return Bytes{uint8_t(k), uint8_t(k + 1), 0, 0xff}; }
inline Uuid sample_uuid(int k) {
  Uuid u;
  for (size_t i = 0; i < u.bytes.size(); ++i) u.bytes[i] = uint8_t(k + int(i));
  return u;
}

// One request, response or data message, for table-driven tests.
struct CodecCase {
  const char* name;  // e.g. "ProduceRequest"
  int16_t api_key;   // -1 for data structs
  bool is_request;
  int16_t min_version;
  int16_t max_version;
  std::string (*round_trip)(int16_t version, int seed);
  std::string (*reencode)(ByteView in, int16_t version, Bytes* out);
  Bytes (*sample)(int16_t version, int seed);
  bool (*decode_prefix)(ByteView in, int16_t version, size_t* consumed, Bytes* out);
};

// Every generated message (defined in the generated protocol_samples.cc).
const std::vector<CodecCase>& codec_cases();

}  // namespace samsa::protocol::testing

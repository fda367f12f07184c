#pragma once
// RequestHeader: the header at the start of every request frame (after the
// int32 size). Kafka's layouts:
//   v1: int16 api_key, int16 api_version, int32 correlation_id,
//       client_id nullable string (ALWAYS int16 length, even in v2)
//   v2: v1 + tagged fields (flexible API versions)
// (v0, without client_id, is only used by ControlledShutdown v0, which we do
// not define.) The header version follows from whether (key, version) is
// flexible; flexible ranges are open-ended, so an ApiVersions request newer
// than we know still parses as v2, as in Kafka.

#include <cstdint>
#include <optional>
#include <string>

#include "base/byte_reader.h"
#include "base/out_buffer.h"

namespace samsa::protocol {

struct RequestHeader {
  int16_t api_key = 0;
  int16_t api_version = 0;
  int32_t correlation_id = 0;
  std::optional<std::string> client_id;
  // Whether api_key is a defined API and api_version within its range. When
  // false, the fields above are still valid (if decode succeeded) so that the
  // broker can answer, e.g. ApiVersions with UNSUPPORTED_VERSION.
  bool supported = false;
  int header_version = 1;

  // Parses the header; on success `r` is positioned at the body. Fails only
  // if the bytes are too short or malformed. An undefined api_key is parsed
  // with the v1 layout (the broker closes such connections anyway).
  bool decode(ByteReader& r);
  // Writes the header in the version that (api_key, api_version) requires
  // (for tests and for clients of our own, e.g. replication fetchers).
  void encode(OutBuffer& out) const;
};

// The request header version (1 or 2) for an API version; 1 for unknown keys.
int request_header_version(int16_t api_key, int16_t api_version);

}  // namespace samsa::protocol

#pragma once
// Response framing: int32 size, then the response header, then the body.
//   header v0: int32 correlation_id
//   header v1: v0 + tagged fields (empty from us)
// v1 iff the request's API version is flexible, EXCEPT ApiVersions, whose
// responses always use v0 (KIP-511: a client must be able to read the reply
// even when it sent a version the broker does not know).
//
// Usage:
//   OutBuffer out;
//   begin_response(out, header.correlation_id, header.api_key, header.api_version);
//   Encoder w(out);
//   response.encode(w, header.api_version);
//   finish_response(out);   // patches the size, counting spliced file regions

#include <cstdint>

#include "base/out_buffer.h"

namespace samsa::protocol {

// The response header version (0 or 1) for a request's (key, version).
int response_header_version(int16_t api_key, int16_t api_version);

// Starts a response frame in an empty `out`: size placeholder and header.
void begin_response(OutBuffer& out, int32_t correlation_id, int16_t api_key, int16_t api_version);
// Same with an explicit header version (0 or 1).
void begin_response_with_header(OutBuffer& out, int32_t correlation_id, int header_version);
// Patches the size prefix: every byte after it, file regions included.
void finish_response(OutBuffer& out);

}  // namespace samsa::protocol

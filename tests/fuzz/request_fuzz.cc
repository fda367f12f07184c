// Fuzz target: the request decoder of every API and version.
//
// Input: one request frame without its int32 size prefix, exactly what a
// connection hands to the broker's dispatch (broker.cc): the request header,
// then the body, decoded as the handler of that API decodes it
// (Request::decode: XRequest::decode at the header's version; bytes after
// the body are allowed). Properties, beyond "never crashes, never reads out
// of bounds, never allocates more than the input justifies":
//   - decoding only looks at the bytes it consumes (the consumed prefix alone
//     decodes to the same message);
//   - what decodes re-encodes canonically: encode(decode(encode(m))) equals
//     encode(m) byte for byte.

#include <optional>
#include <string>

#include "fuzz_support.h"
#include "protocol/codec_test_support.h"
#include "protocol/generated/apis.h"
#include "protocol/request_header.h"

namespace samsa::fuzz {
namespace {

using protocol::testing::CodecCase;

const CodecCase* request_case(int16_t api_key) {
  for (const CodecCase& c : protocol::testing::codec_cases()) {
    if (c.is_request && c.api_key == api_key) return &c;
  }
  return nullptr;
}

void check_request(ByteView frame) {
  ByteReader r(frame);
  protocol::RequestHeader header;
  if (!header.decode(r) || !header.supported) return;  // the broker answers or closes
  const CodecCase* c = request_case(header.api_key);
  FUZZ_CHECK(c != nullptr);  // every API the broker supports has a request codec
  FUZZ_CHECK(header.api_version >= c->min_version && header.api_version <= c->max_version);
  ByteView body = r.rest();

  size_t consumed = 0;
  Bytes encoded;
  if (!c->decode_prefix(body, header.api_version, &consumed, &encoded)) return;  // malformed: connection closed
  FUZZ_CHECK(consumed <= body.size());

  size_t prefix_consumed = 0;
  Bytes prefix_encoded;
  FUZZ_CHECK(c->decode_prefix(body.first(consumed), header.api_version, &prefix_consumed, &prefix_encoded));
  FUZZ_CHECK(prefix_consumed == consumed);
  FUZZ_CHECK(prefix_encoded == encoded);

  Bytes again;
  std::string problem = c->reencode(encoded, header.api_version, &again);
  if (!problem.empty()) std::fprintf(stderr, "%s v%d: re-decoding our encoding: %s\n", c->name, header.api_version,
                                     problem.c_str());
  FUZZ_CHECK(problem.empty());
  FUZZ_CHECK(again == encoded);
}

}  // namespace
}  // namespace samsa::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  samsa::fuzz::check_request(samsa::ByteView(data, size));
  return 0;
}

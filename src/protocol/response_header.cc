#include "protocol/response_header.h"

#include "base/assert.h"
#include "base/byte_writer.h"
#include "protocol/generated/apis.h"

namespace samsa::protocol {

int response_header_version(int16_t api_key, int16_t api_version) {
  if (api_key == int16_t(ApiKey::kApiVersions)) return 0;
  const ApiInfo* api = find_api(api_key);
  return api && api->is_flexible(api_version) ? 1 : 0;
}

void begin_response(OutBuffer& out, int32_t correlation_id, int16_t api_key, int16_t api_version) {
  begin_response_with_header(out, correlation_id, response_header_version(api_key, api_version));
}

void begin_response_with_header(OutBuffer& out, int32_t correlation_id, int header_version) {
  ASSERT(out.bytes().empty() && out.splices().empty());
  ByteWriter w(out.bytes());
  w.write_i32(0);  // size, patched by finish_response
  w.write_i32(correlation_id);
  if (header_version >= 1) w.write_uvarint(0);  // no tagged fields
}

void finish_response(OutBuffer& out) {
  ASSERT(out.bytes().size() >= 4);
  const size_t size = out.total_size() - 4;
  ASSERT(size <= 0x7fffffff);
  store_be32(out.bytes().data(), uint32_t(size));
}

}  // namespace samsa::protocol

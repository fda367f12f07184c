#include "protocol/request_header.h"

#include "protocol/codec.h"
#include "protocol/generated/apis.h"

namespace samsa::protocol {

int request_header_version(int16_t api_key, int16_t api_version) {
  const ApiInfo* api = find_api(api_key);
  return api && api->is_flexible(api_version) ? 2 : 1;
}

bool RequestHeader::decode(ByteReader& r) {
  api_key = r.read_i16();
  api_version = r.read_i16();
  correlation_id = r.read_i32();
  if (!r.ok()) return false;
  const ApiInfo* api = find_api(api_key);
  supported = api != nullptr && api->supports(api_version);
  header_version = request_header_version(api_key, api_version);
  // client_id is never compact, even in header v2 (flex = false).
  if (!read_nullable_string(r, /*flex=*/false, /*nullable=*/true, client_id)) return false;
  if (header_version >= 2 && !skip_tagged_fields(r)) return false;
  return r.ok();
}

void RequestHeader::encode(OutBuffer& out) const {
  Encoder w(out);
  w.write_i16(api_key);
  w.write_i16(api_version);
  w.write_i32(correlation_id);
  w.write_nullable_string(/*flex=*/false, client_id, /*nullable=*/true);
  if (request_header_version(api_key, api_version) >= 2) w.write_uvarint(0);
}

}  // namespace samsa::protocol

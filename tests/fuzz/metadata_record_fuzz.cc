// Fuzz target: the metadata record decoder (controller/metadata_codec.h),
// which reads every record value of the __cluster_metadata log at startup.
//
// Input: one record value. Properties, beyond memory safety and bounded
// allocation: what decodes re-encodes canonically (encode(decode(encode(r)))
// equals encode(r)).

#include "controller/metadata_codec.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace samsa;
  auto record = decode_metadata_record(ByteView(data, size));
  if (!record.ok()) return 0;
  Bytes encoded = encode_metadata_record(*record);
  auto again = decode_metadata_record(encoded);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(encode_metadata_record(*again) == encoded);
  return 0;
}

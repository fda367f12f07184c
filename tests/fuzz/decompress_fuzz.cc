// Fuzz target: each decompressor (model/compression.h) on hostile input.
//
// Input: byte 0 picks the codec (none, gzip, snappy, lz4, zstd, or the
// legacy magic-0 LZ4 framing), byte 1 the output bound; the rest is the
// compressed blob. Properties, beyond memory safety:
//   - output never exceeds the bound; exceeding it is kInvalidArgument;
//   - on failure the output buffer is left as it was (decompress_to appends);
//   - what decompresses compresses and decompresses back to the same bytes.

#include "fuzz_support.h"
#include "model/compression.h"

namespace samsa::fuzz {
namespace {

// Small bounds keep each run fast; one in four inputs uses the broker's
// default bound, so that the limit logic is also exercised at full size.
size_t output_bound(uint8_t choice) {
  switch (choice % 4) {
    case 0: return 1;
    case 1: return 64 << 10;
    case 2: return 1 << 20;
    default: return kDefaultMaxDecompressedBytes;
  }
}

Status decompress_with(int codec, ByteView in, Bytes& out, size_t bound) {
  if (codec == 5) return decompress_lz4_legacy_to(in, out, bound);
  return decompress_to(Compression(codec), in, out, bound);
}

Status compress_with(int codec, ByteView in, Bytes& out) {
  if (codec == 5) return compress_lz4_legacy_to(in, out);
  return compress_to(Compression(codec), in, out);
}

void check_decompress(FuzzInput in) {
  const int codec = in.u8() % 6;
  const size_t bound = output_bound(in.u8());
  ByteView blob = in.rest();

  const Bytes prefix = {0xde, 0xad};  // output is appended after existing bytes
  Bytes out = prefix;
  Status st = decompress_with(codec, blob, out, bound);
  if (!st.ok()) {
    FUZZ_CHECK(out == prefix);
    return;
  }
  FUZZ_CHECK(out.size() >= prefix.size());
  FUZZ_CHECK(out.size() - prefix.size() <= bound);
  ByteView plain = ByteView(out).subspan(prefix.size());

  Bytes packed;
  FUZZ_CHECK(compress_with(codec, plain, packed).ok());
  Bytes back;
  FUZZ_CHECK(decompress_with(codec, packed, back, plain.size()).ok());
  FUZZ_CHECK(back.size() == plain.size() && std::equal(back.begin(), back.end(), plain.begin()));
  if (codec == int(Compression::kSnappy)) {  // the framing legacy readers get
    Bytes xerial;
    FUZZ_CHECK(compress_snappy_xerial_to(plain, xerial).ok());
    Bytes unframed;
    FUZZ_CHECK(decompress_to(Compression::kSnappy, xerial, unframed, plain.size()).ok());
    FUZZ_CHECK(unframed.size() == plain.size() && std::equal(unframed.begin(), unframed.end(), plain.begin()));
  }
}

}  // namespace
}  // namespace samsa::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  samsa::fuzz::check_decompress(samsa::fuzz::FuzzInput(data, size));
  return 0;
}

// LZ4 frame codec for Kafka (liblz4's lz4frame API), including the legacy
// magic-0 variant whose header checksum is computed the wrong way
// (KAFKA-3160, KIP-57). See compression.h for the contract.

#include <lz4frame.h>

#include <cstring>
#include <memory>
#include <string>

#include "model/compression.h"
#include "model/compression_internal.h"

namespace samsa {

namespace {
constexpr uint32_t kPrime1 = 2654435761U;
constexpr uint32_t kPrime2 = 2246822519U;
constexpr uint32_t kPrime3 = 3266489917U;
constexpr uint32_t kPrime4 = 668265263U;
constexpr uint32_t kPrime5 = 374761393U;

uint32_t rotl(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }
uint32_t load_le32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;  // x86/arm little-endian hosts only, as the rest of the build assumes
}
uint32_t xxh_round(uint32_t acc, uint32_t input) { return rotl(acc + input * kPrime2, 13) * kPrime1; }
}  // namespace

uint32_t xxhash32(ByteView data, uint32_t seed) {
  const uint8_t* p = data.data();
  const uint8_t* end = p + data.size();
  uint32_t h;
  if (data.size() >= 16) {
    uint32_t v1 = seed + kPrime1 + kPrime2, v2 = seed + kPrime2, v3 = seed, v4 = seed - kPrime1;
    for (; end - p >= 16; p += 16) {
      v1 = xxh_round(v1, load_le32(p));
      v2 = xxh_round(v2, load_le32(p + 4));
      v3 = xxh_round(v3, load_le32(p + 8));
      v4 = xxh_round(v4, load_le32(p + 12));
    }
    h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
  } else {
    h = seed + kPrime5;
  }
  h += uint32_t(data.size());
  for (; end - p >= 4; p += 4) h = rotl(h + load_le32(p) * kPrime3, 17) * kPrime4;
  for (; p < end; ++p) h = rotl(h + *p * kPrime5, 11) * kPrime1;
  h ^= h >> 15;
  h *= kPrime2;
  h ^= h >> 13;
  h *= kPrime3;
  h ^= h >> 16;
  return h;
}

namespace {
constexpr uint32_t kLz4FrameMagic = 0x184D2204;

struct DctxFree {
  void operator()(LZ4F_dctx* c) const { LZ4F_freeDecompressionContext(c); }
};

LZ4F_dctx* lz4_dctx() {
  thread_local std::unique_ptr<LZ4F_dctx, DctxFree> ctx([] {
    LZ4F_dctx* c = nullptr;
    LZ4F_createDecompressionContext(&c, LZ4F_VERSION);
    return c;
  }());
  return ctx.get();
}

Error lz4_error(size_t code) { return Error(ErrorKind::kCorrupt, std::string("lz4: ") + LZ4F_getErrorName(code)); }

class Lz4Stream final : public DecompressStream {
 public:
  Lz4Stream(ByteView input, size_t max_output_bytes)
      : DecompressStream("lz4", max_output_bytes), dctx_(lz4_dctx()), input_(input) {
    ASSERT_MSG(!in_use(), "one lz4 stream per thread at a time");
    in_use() = true;
    LZ4F_resetDecompressionContext(dctx_);
  }
  ~Lz4Stream() override { in_use() = false; }
  size_t size_hint() const override { return input_.size() * 4; }

 private:
  static bool& in_use() {
    thread_local bool used = false;
    return used;
  }
  Result<size_t> read_some(std::span<uint8_t> out) override {
    for (;;) {
      if (pos_ >= input_.size() && hint_ == 0) return size_t(0);  // every frame complete
      size_t dst_size = out.size();
      size_t src_size = input_.size() - pos_;
      hint_ = LZ4F_decompress(dctx_, out.data(), &dst_size, input_.data() + pos_, &src_size, nullptr);
      if (LZ4F_isError(hint_)) return lz4_error(hint_);
      pos_ += src_size;
      if (dst_size > 0) return dst_size;
      if (hint_ != 0 && src_size == 0) return Error(ErrorKind::kCorrupt, "lz4: truncated frame");
    }
  }

  LZ4F_dctx* dctx_;
  ByteView input_;
  size_t pos_ = 0;
  size_t hint_ = 1;  // 0 once a frame is complete
};

// Size of the frame descriptor (FLG .. before the header checksum), or 0 if
// the input does not start with a well-formed frame header.
size_t lz4_descriptor_size(ByteView input) {
  if (input.size() < 7 || load_le32(input.data()) != kLz4FrameMagic) return 0;
  uint8_t flg = input[4];
  size_t n = 2 + ((flg & 0x08) ? 8 : 0) + ((flg & 0x01) ? 4 : 0);
  return input.size() >= 4 + n + 1 ? n : 0;
}
}  // namespace

namespace detail {

Result<std::unique_ptr<DecompressStream>> lz4_stream(ByteView input, size_t max_output_bytes) {
  if (input.empty()) return Error(ErrorKind::kCorrupt, "lz4: empty input");
  return std::unique_ptr<DecompressStream>(new Lz4Stream(input, max_output_bytes));
}

Status lz4_decompress(ByteView input, Bytes& out, size_t max_output_bytes) {
  ASSIGN_OR_RETURN(std::unique_ptr<DecompressStream> stream, lz4_stream(input, max_output_bytes));
  return drain(*stream, out, max_output_bytes);
}

Status lz4_compress(ByteView input, Bytes& out, int level) {
  if (level == kDefaultCompressionLevel) level = 0;  // fast mode, as librdkafka
  LZ4F_preferences_t prefs;
  std::memset(&prefs, 0, sizeof prefs);
  // Kafka's own reader handles 64 KiB independent blocks without content size.
  prefs.frameInfo.blockSizeID = LZ4F_max64KB;
  prefs.frameInfo.blockMode = LZ4F_blockIndependent;
  prefs.frameInfo.contentChecksumFlag = LZ4F_noContentChecksum;
  prefs.compressionLevel = level;
  size_t start = out.size();
  size_t bound = LZ4F_compressFrameBound(input.size(), &prefs);
  out.resize(start + bound);
  size_t n = LZ4F_compressFrame(out.data() + start, bound, input.data(), input.size(), &prefs);
  if (LZ4F_isError(n)) {
    out.resize(start);
    return Error(ErrorKind::kIo, std::string("lz4: ") + LZ4F_getErrorName(n));
  }
  out.resize(start + n);
  return ok_status();
}

}  // namespace detail

Status decompress_lz4_legacy_to(ByteView input, Bytes& out, size_t max_output_bytes) {
  size_t desc = lz4_descriptor_size(input);
  if (desc == 0) return Error(ErrorKind::kCorrupt, "lz4: bad frame header");
  // Rewrite the header checksum to the correct one so liblz4 accepts both
  // the broken (magic 0) and the correct variant.
  Bytes fixed(input.begin(), input.end());
  fixed[4 + desc] = uint8_t(xxhash32(ByteView(fixed).subspan(4, desc), 0) >> 8);
  return detail::lz4_decompress(fixed, out, max_output_bytes);
}

Status compress_lz4_legacy_to(ByteView input, Bytes& out) {
  size_t start = out.size();
  RETURN_IF_ERROR(detail::lz4_compress(input, out, kDefaultCompressionLevel));
  ByteView frame = ByteView(out).subspan(start);
  size_t desc = lz4_descriptor_size(frame);
  ASSERT(desc != 0);
  // KAFKA-3160: magic-0 readers expect the checksum over magic + descriptor.
  out[start + 4 + desc] = uint8_t(xxhash32(frame.subspan(0, 4 + desc), 0) >> 8);
  return ok_status();
}

}  // namespace samsa

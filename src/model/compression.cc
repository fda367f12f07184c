#include "model/compression.h"

#include <snappy.h>
#include <zlib.h>
#include <zstd.h>

#include <cstring>
#include <memory>
#include <string>

#include "model/compression_internal.h"

namespace samsa {

const char* to_string(Compression codec) {
  switch (codec) {
    case Compression::kNone: return "none";
    case Compression::kGzip: return "gzip";
    case Compression::kSnappy: return "snappy";
    case Compression::kLz4: return "lz4";
    case Compression::kZstd: return "zstd";
  }
  return "unknown";
}

bool is_known_compression(int codec_id) { return codec_id >= 0 && codec_id <= 4; }

Status decompress_to(Compression codec, ByteView input, Bytes& out, size_t max_output_bytes) {
  switch (codec) {
    case Compression::kNone:
      if (input.size() > max_output_bytes) return detail::output_limit_error("none", max_output_bytes);
      out.insert(out.end(), input.begin(), input.end());
      return ok_status();
    case Compression::kGzip: return detail::gzip_decompress(input, out, max_output_bytes);
    case Compression::kSnappy: return detail::snappy_decompress(input, out, max_output_bytes);
    case Compression::kLz4: return detail::lz4_decompress(input, out, max_output_bytes);
    case Compression::kZstd: return detail::zstd_decompress(input, out, max_output_bytes);
  }
  return Error(ErrorKind::kUnsupported, "unknown compression codec " + std::to_string(int(codec)));
}

Result<Bytes> decompress(Compression codec, ByteView input, size_t max_output_bytes) {
  Bytes out;
  RETURN_IF_ERROR(decompress_to(codec, input, out, max_output_bytes));
  return out;
}

Status compress_to(Compression codec, ByteView input, Bytes& out, int level) {
  switch (codec) {
    case Compression::kNone: out.insert(out.end(), input.begin(), input.end()); return ok_status();
    case Compression::kGzip: return detail::gzip_compress(input, out, level);
    case Compression::kSnappy: return detail::snappy_compress(input, out);
    case Compression::kLz4: return detail::lz4_compress(input, out, level);
    case Compression::kZstd: return detail::zstd_compress(input, out, level);
  }
  return Error(ErrorKind::kUnsupported, "unknown compression codec " + std::to_string(int(codec)));
}

Result<Bytes> compress(Compression codec, ByteView input, int level) {
  Bytes out;
  RETURN_IF_ERROR(compress_to(codec, input, out, level));
  return out;
}

namespace detail {

Error output_limit_error(const char* codec, size_t max_output_bytes) {
  return Error(ErrorKind::kInvalidArgument, std::string(codec) + ": decompressed size exceeds limit of " +
                                                std::to_string(max_output_bytes) + " bytes");
}

// ---- gzip (zlib) ----

namespace {
bool all_zero(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != 0) return false;
  return true;
}

Status gzip_inflate(z_stream& zs, BoundedOutput& sink, size_t max_output_bytes) {
  for (;;) {
    std::span<uint8_t> space = sink.space();
    if (space.empty()) return output_limit_error("gzip", max_output_bytes);
    zs.next_out = space.data();
    zs.avail_out = uInt(std::min<size_t>(space.size(), UINT32_MAX));
    uInt before = zs.avail_out;
    int rc = inflate(&zs, Z_NO_FLUSH);
    sink.commit(before - zs.avail_out);
    if (rc == Z_STREAM_END) {
      if (sink.exceeded()) return output_limit_error("gzip", max_output_bytes);
      // Another member may follow (RFC 1952 allows concatenation); some
      // writers pad with zeros, which we tolerate.
      if (zs.avail_in == 0 || all_zero(zs.next_in, zs.avail_in)) return ok_status();
      if (inflateReset(&zs) != Z_OK) return Error(ErrorKind::kCorrupt, "gzip: reset failed");
      continue;
    }
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR && zs.avail_in == 0) return Error(ErrorKind::kCorrupt, "gzip: truncated stream");
    if (rc == Z_BUF_ERROR) continue;  // needs more output space
    return Error(ErrorKind::kCorrupt, std::string("gzip: ") + (zs.msg ? zs.msg : "inflate failed"));
  }
}
}  // namespace

Status gzip_decompress(ByteView input, Bytes& out, size_t max_output_bytes) {
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) return Error(ErrorKind::kIo, "gzip: inflateInit2 failed");
  zs.next_in = const_cast<Bytef*>(input.data());
  zs.avail_in = uInt(input.size());
  if (input.size() > UINT32_MAX) {
    inflateEnd(&zs);
    return Error(ErrorKind::kInvalidArgument, "gzip: input too large");
  }
  BoundedOutput sink(out, max_output_bytes, input.size() * 4);
  Status st = input.empty() ? Status(Error(ErrorKind::kCorrupt, "gzip: empty input"))
                            : gzip_inflate(zs, sink, max_output_bytes);
  inflateEnd(&zs);
  if (!st.ok()) {
    sink.abandon();
    return st;
  }
  sink.finish();
  return ok_status();
}

Status gzip_compress(ByteView input, Bytes& out, int level) {
  if (level == kDefaultCompressionLevel) level = Z_DEFAULT_COMPRESSION;
  if (level < -1 || level > 9) return Error(ErrorKind::kInvalidArgument, "gzip: level must be -1..9");
  z_stream zs{};
  // windowBits 15 + 16: write a gzip (not zlib) wrapper.
  if (deflateInit2(&zs, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return Error(ErrorKind::kIo, "gzip: deflateInit2 failed");
  size_t start = out.size();
  size_t bound = deflateBound(&zs, uLong(input.size()));
  out.resize(start + bound);
  zs.next_in = const_cast<Bytef*>(input.data());
  zs.avail_in = uInt(input.size());
  zs.next_out = out.data() + start;
  zs.avail_out = uInt(bound);
  int rc = deflate(&zs, Z_FINISH);
  size_t written = bound - zs.avail_out;
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) {
    out.resize(start);
    return Error(ErrorKind::kIo, "gzip: deflate failed");
  }
  out.resize(start + written);
  return ok_status();
}

// ---- snappy ----

constexpr uint8_t kXerialMagic[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
constexpr size_t kXerialHeaderSize = 16;  // magic + version i32 + compatible version i32

namespace {

Status snappy_raw_block(ByteView block, Bytes& out, size_t& budget, size_t max_output_bytes) {
  size_t n = 0;
  const char* src = reinterpret_cast<const char*>(block.data());
  if (!snappy::GetUncompressedLength(src, block.size(), &n))
    return Error(ErrorKind::kCorrupt, "snappy: bad block length");
  if (n > budget) return output_limit_error("snappy", max_output_bytes);
  size_t at = out.size();
  out.resize(at + n);
  if (!snappy::RawUncompress(src, block.size(), reinterpret_cast<char*>(out.data() + at))) {
    out.resize(at);
    return Error(ErrorKind::kCorrupt, "snappy: corrupt block");
  }
  budget -= n;
  return ok_status();
}

Status snappy_xerial(ByteView input, Bytes& out, size_t max_output_bytes) {
  size_t budget = max_output_bytes;
  size_t pos = kXerialHeaderSize;
  while (pos < input.size()) {
    if (input.size() - pos < 4) return Error(ErrorKind::kCorrupt, "snappy: truncated xerial block length");
    uint32_t len = load_be32(input.data() + pos);
    pos += 4;
    if (len > input.size() - pos) return Error(ErrorKind::kCorrupt, "snappy: xerial block beyond input");
    RETURN_IF_ERROR(snappy_raw_block(input.subspan(pos, len), out, budget, max_output_bytes));
    pos += len;
  }
  return ok_status();
}
}  // namespace

Status snappy_decompress(ByteView input, Bytes& out, size_t max_output_bytes) {
  size_t start = out.size();
  bool xerial = input.size() >= kXerialHeaderSize && std::memcmp(input.data(), kXerialMagic, 8) == 0;
  size_t budget = max_output_bytes;
  Status st = xerial ? snappy_xerial(input, out, max_output_bytes)
                     : snappy_raw_block(input, out, budget, max_output_bytes);
  if (!st.ok()) out.resize(start);
  return st;
}

Status snappy_compress(ByteView input, Bytes& out) {
  size_t start = out.size();
  out.resize(start + snappy::MaxCompressedLength(input.size()));
  size_t written = 0;
  snappy::RawCompress(reinterpret_cast<const char*>(input.data()), input.size(),
                      reinterpret_cast<char*>(out.data() + start), &written);
  out.resize(start + written);
  return ok_status();
}

}  // namespace detail

Status compress_snappy_xerial_to(ByteView input, Bytes& out) {
  constexpr size_t kBlock = 32 * 1024;  // snappy-java's default block size
  out.insert(out.end(), std::begin(detail::kXerialMagic), std::end(detail::kXerialMagic));
  const uint8_t versions[8] = {0, 0, 0, 1, 0, 0, 0, 1};  // version 1, compatible with 1
  out.insert(out.end(), versions, versions + 8);
  for (size_t at = 0; at < input.size(); at += kBlock) {
    size_t len_at = out.size();
    out.resize(len_at + 4);
    RETURN_IF_ERROR(detail::snappy_compress(input.subspan(at, std::min(kBlock, input.size() - at)), out));
    store_be32(out.data() + len_at, uint32_t(out.size() - len_at - 4));
  }
  return ok_status();
}

namespace detail {

// ---- zstd ----

namespace {
struct ZstdDctxFree {
  void operator()(ZSTD_DCtx* c) const { ZSTD_freeDCtx(c); }
};
struct ZstdCctxFree {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
// One context per thread: creating one costs more than decoding a small batch.
ZSTD_DCtx* zstd_dctx() {
  thread_local std::unique_ptr<ZSTD_DCtx, ZstdDctxFree> ctx(ZSTD_createDCtx());
  return ctx.get();
}
ZSTD_CCtx* zstd_cctx() {
  thread_local std::unique_ptr<ZSTD_CCtx, ZstdCctxFree> ctx(ZSTD_createCCtx());
  return ctx.get();
}

Status zstd_stream(ZSTD_DCtx* dctx, ByteView input, BoundedOutput& sink, size_t max_output_bytes) {
  ZSTD_inBuffer in{input.data(), input.size(), 0};
  size_t last = 1;  // 0 once a frame is complete
  while (in.pos < in.size || last != 0) {
    std::span<uint8_t> space = sink.space();
    if (space.empty()) return output_limit_error("zstd", max_output_bytes);
    ZSTD_outBuffer outb{space.data(), space.size(), 0};
    size_t in_before = in.pos;
    last = ZSTD_decompressStream(dctx, &outb, &in);
    sink.commit(outb.pos);
    if (ZSTD_isError(last)) return Error(ErrorKind::kCorrupt, std::string("zstd: ") + ZSTD_getErrorName(last));
    if (last != 0 && in.pos == in.size && in_before == in.pos && outb.pos < outb.size)
      return Error(ErrorKind::kCorrupt, "zstd: truncated frame");
  }
  if (sink.exceeded()) return output_limit_error("zstd", max_output_bytes);
  return ok_status();
}
}  // namespace

Status zstd_decompress(ByteView input, Bytes& out, size_t max_output_bytes) {
  if (input.empty()) return Error(ErrorKind::kCorrupt, "zstd: empty input");
  ZSTD_DCtx* dctx = zstd_dctx();
  ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
  unsigned long long claimed = ZSTD_getFrameContentSize(input.data(), input.size());
  size_t hint = claimed < max_output_bytes ? size_t(claimed) + 1 : input.size() * 4;
  BoundedOutput sink(out, max_output_bytes, hint);
  Status st = zstd_stream(dctx, input, sink, max_output_bytes);
  if (!st.ok()) {
    sink.abandon();
    return st;
  }
  sink.finish();
  return ok_status();
}

Status zstd_compress(ByteView input, Bytes& out, int level) {
  if (level == kDefaultCompressionLevel) level = 3;
  if (level < ZSTD_minCLevel() || level > ZSTD_maxCLevel())
    return Error(ErrorKind::kInvalidArgument, "zstd: level out of range");
  size_t start = out.size();
  size_t bound = ZSTD_compressBound(input.size());
  out.resize(start + bound);
  size_t n = ZSTD_compressCCtx(zstd_cctx(), out.data() + start, bound, input.data(), input.size(), level);
  if (ZSTD_isError(n)) {
    out.resize(start);
    return Error(ErrorKind::kIo, std::string("zstd: ") + ZSTD_getErrorName(n));
  }
  out.resize(start + n);
  return ok_status();
}

}  // namespace detail
}  // namespace samsa

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
    case Compression::kSnappy: return detail::snappy_decompress(input, out, max_output_bytes);
    case Compression::kLz4: return detail::lz4_decompress(input, out, max_output_bytes);
    case Compression::kGzip:
    case Compression::kZstd: {
      ASSIGN_OR_RETURN(std::unique_ptr<DecompressStream> stream, DecompressStream::open(codec, input, max_output_bytes));
      return detail::drain(*stream, out, max_output_bytes);
    }
  }
  return Error(ErrorKind::kUnsupported, "unknown compression codec " + std::to_string(int(codec)));
}

namespace {
// kNone as a stream: the input itself.
class CopyStream final : public DecompressStream {
 public:
  CopyStream(ByteView input, size_t max_output_bytes) : DecompressStream("none", max_output_bytes), input_(input) {}

 private:
  Result<size_t> read_some(std::span<uint8_t> out) override {
    size_t n = std::min(out.size(), input_.size() - pos_);
    std::memcpy(out.data(), input_.data() + pos_, n);
    pos_ += n;
    return n;
  }
  ByteView input_;
  size_t pos_ = 0;
};
}  // namespace

Result<std::unique_ptr<DecompressStream>> DecompressStream::open(Compression codec, ByteView input,
                                                                 size_t max_output_bytes) {
  switch (codec) {
    case Compression::kNone: return std::unique_ptr<DecompressStream>(new CopyStream(input, max_output_bytes));
    case Compression::kGzip: return detail::gzip_stream(input, max_output_bytes);
    case Compression::kSnappy: return detail::snappy_stream(input, max_output_bytes);
    case Compression::kLz4: return detail::lz4_stream(input, max_output_bytes);
    case Compression::kZstd: return detail::zstd_stream(input, max_output_bytes);
  }
  return Error(ErrorKind::kUnsupported, "unknown compression codec " + std::to_string(int(codec)));
}

Result<size_t> DecompressStream::read(std::span<uint8_t> out) {
  ASSERT(!out.empty());
  if (produced_ > max_) return detail::output_limit_error(codec_, max_);
  // One byte more than the bound allows detects "beyond the bound".
  size_t room = max_ - produced_ + 1;
  ASSIGN_OR_RETURN(size_t n, read_some(out.first(std::min(out.size(), room))));
  produced_ += n;
  if (produced_ > max_) return detail::output_limit_error(codec_, max_);
  return n;
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

Status drain(DecompressStream& stream, Bytes& out, size_t max_output_bytes) {
  BoundedOutput sink(out, max_output_bytes, stream.size_hint());
  for (;;) {
    std::span<uint8_t> space = sink.space();
    ASSERT(!space.empty());  // the stream fails one byte past the bound first
    Result<size_t> n = stream.read(space);
    if (!n.ok()) {
      sink.abandon();
      return n.error();
    }
    if (*n == 0) break;
    sink.commit(*n);
  }
  sink.finish();
  return ok_status();
}

// ---- gzip (zlib) ----

namespace {
bool all_zero(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != 0) return false;
  return true;
}

class GzipStream final : public DecompressStream {
 public:
  explicit GzipStream(size_t max_output_bytes) : DecompressStream("gzip", max_output_bytes) {}
  ~GzipStream() override {
    if (initialized_) inflateEnd(&zs_);
  }
  Status init(ByteView input) {
    if (input.empty()) return Error(ErrorKind::kCorrupt, "gzip: empty input");
    if (input.size() > UINT32_MAX) return Error(ErrorKind::kInvalidArgument, "gzip: input too large");
    if (inflateInit2(&zs_, 16 + MAX_WBITS) != Z_OK) return Error(ErrorKind::kIo, "gzip: inflateInit2 failed");
    initialized_ = true;
    zs_.next_in = const_cast<Bytef*>(input.data());
    zs_.avail_in = uInt(input.size());
    return ok_status();
  }

 private:
  Result<size_t> read_some(std::span<uint8_t> out) override {
    const uInt room = uInt(std::min<size_t>(out.size(), UINT32_MAX));
    zs_.next_out = out.data();
    zs_.avail_out = room;
    while (!done_ && zs_.avail_out == room) {  // until some output or the end
      int rc = inflate(&zs_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        // Another member may follow (RFC 1952 allows concatenation); some
        // writers pad with zeros, which we tolerate.
        if (zs_.avail_in == 0 || all_zero(zs_.next_in, zs_.avail_in)) {
          done_ = true;
        } else if (inflateReset(&zs_) != Z_OK) {
          return Error(ErrorKind::kCorrupt, "gzip: reset failed");
        }
        continue;
      }
      if (rc == Z_OK) continue;
      // No progress was possible: the input ended inside a member.
      if (rc == Z_BUF_ERROR) return Error(ErrorKind::kCorrupt, "gzip: truncated stream");
      return Error(ErrorKind::kCorrupt, std::string("gzip: ") + (zs_.msg ? zs_.msg : "inflate failed"));
    }
    return size_t(room - zs_.avail_out);
  }

  z_stream zs_{};
  bool initialized_ = false;
  bool done_ = false;
};
}  // namespace

Result<std::unique_ptr<DecompressStream>> gzip_stream(ByteView input, size_t max_output_bytes) {
  auto stream = std::make_unique<GzipStream>(max_output_bytes);
  RETURN_IF_ERROR(stream->init(input));
  return std::unique_ptr<DecompressStream>(std::move(stream));
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

namespace {
// Snappy blocks are not streamable (a raw block is one unit, and both
// framings state each block's size up front, checked against the bound
// before decoding): the stream decodes all at once, then hands it out.
class SnappyStream final : public DecompressStream {
 public:
  explicit SnappyStream(size_t max_output_bytes) : DecompressStream("snappy", max_output_bytes) {}
  Bytes plain;

 private:
  Result<size_t> read_some(std::span<uint8_t> out) override {
    size_t n = std::min(out.size(), plain.size() - pos_);
    if (n == 0) return size_t(0);  // an empty block: plain.data() may be null, which memcpy may not take
    std::memcpy(out.data(), plain.data() + pos_, n);
    pos_ += n;
    return n;
  }
  size_t pos_ = 0;
};
}  // namespace

Result<std::unique_ptr<DecompressStream>> snappy_stream(ByteView input, size_t max_output_bytes) {
  auto stream = std::make_unique<SnappyStream>(max_output_bytes);
  RETURN_IF_ERROR(snappy_decompress(input, stream->plain, max_output_bytes));
  return std::unique_ptr<DecompressStream>(std::move(stream));
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

class ZstdStream final : public DecompressStream {
 public:
  ZstdStream(ByteView input, size_t max_output_bytes)
      : DecompressStream("zstd", max_output_bytes), dctx_(zstd_dctx()), in_{input.data(), input.size(), 0} {
    ASSERT_MSG(!in_use(), "one zstd stream per thread at a time");
    in_use() = true;
    ZSTD_DCtx_reset(dctx_, ZSTD_reset_session_only);
    unsigned long long claimed = ZSTD_getFrameContentSize(input.data(), input.size());
    hint_ = claimed < max_output_bytes ? size_t(claimed) + 1 : input.size() * 4;
  }
  ~ZstdStream() override { in_use() = false; }
  size_t size_hint() const override { return hint_; }

 private:
  static bool& in_use() {
    thread_local bool used = false;
    return used;
  }
  Result<size_t> read_some(std::span<uint8_t> out) override {
    ZSTD_outBuffer outb{out.data(), out.size(), 0};
    while (outb.pos == 0) {
      if (in_.pos == in_.size && last_ == 0) return size_t(0);  // every frame complete
      size_t in_before = in_.pos;
      last_ = ZSTD_decompressStream(dctx_, &outb, &in_);
      if (ZSTD_isError(last_)) return Error(ErrorKind::kCorrupt, std::string("zstd: ") + ZSTD_getErrorName(last_));
      if (last_ != 0 && in_.pos == in_.size && in_before == in_.pos && outb.pos == 0)
        return Error(ErrorKind::kCorrupt, "zstd: truncated frame");
    }
    return outb.pos;
  }

  ZSTD_DCtx* dctx_;
  ZSTD_inBuffer in_;
  size_t last_ = 1;  // 0 once a frame is complete
  size_t hint_ = 0;
};
}  // namespace

Result<std::unique_ptr<DecompressStream>> zstd_stream(ByteView input, size_t max_output_bytes) {
  if (input.empty()) return Error(ErrorKind::kCorrupt, "zstd: empty input");
  return std::unique_ptr<DecompressStream>(new ZstdStream(input, max_output_bytes));
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

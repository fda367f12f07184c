#pragma once
// The four Kafka compression codecs, in exactly one place (DESIGN.md: model/).
// Each codec compresses/decompresses one "records" blob: the bytes after a v2
// batch header, or the value of a legacy wrapper message.
//
// Framings accepted on decode (docs/formats/record-batch.md#compression):
//   gzip   RFC 1952, one or more members back to back.
//   snappy xerial-framed (magic 0x82 "SNAPPY" 0, written by the Java client)
//          or a single raw snappy block (librdkafka, sarama). Written raw.
//   lz4    LZ4 frame format (content/block checksums verified when present).
//          Written as 64 KiB independent blocks, no content checksum, like Kafka.
//   zstd   one or more zstd frames, content size optional (streamed).
//
// Untrusted input: decompression never allocates beyond `max_output_bytes`;
// exceeding it is ErrorKind::kInvalidArgument ("zip bomb"), malformed input is
// kCorrupt, an unknown codec id kUnsupported. Thread-safe: no shared state.

#include <cstddef>
#include <memory>
#include <span>

#include "base/bytes.h"
#include "base/result.h"
#include "model/record_batch_header.h"

namespace samsa {

// Default bound on one decompressed blob. Kafka's default max.message.bytes is
// 1 MiB compressed; 64 MiB decompressed leaves room for very compressible
// batches while keeping a malicious batch from exhausting memory.
inline constexpr size_t kDefaultMaxDecompressedBytes = size_t(64) << 20;

// Sentinel for "the codec's default level" (gzip 6, lz4 fast, zstd 3).
inline constexpr int kDefaultCompressionLevel = -1000;

const char* to_string(Compression codec);
// True for ids 0..4 (none, gzip, snappy, lz4, zstd).
bool is_known_compression(int codec_id);

// Appends the decompressed form of `input` to `out`. kNone copies.
Status decompress_to(Compression codec, ByteView input, Bytes& out,
                     size_t max_output_bytes = kDefaultMaxDecompressedBytes);
Result<Bytes> decompress(Compression codec, ByteView input,
                         size_t max_output_bytes = kDefaultMaxDecompressedBytes);

// Pull-style decompression of one blob: read() hands out the next bytes, so
// a caller can look at the data as it comes (validation parses records on
// the fly) and stop early without ever holding all of it. Same framings and
// errors as decompress_to (which is built on it): at most max_output_bytes
// are produced, one byte more is kInvalidArgument. `input` must outlive the
// stream. One stream per codec per thread at a time (zstd and lz4 reuse a
// per-thread context).
class DecompressStream {
 public:
  static Result<std::unique_ptr<DecompressStream>> open(Compression codec, ByteView input,
                                                        size_t max_output_bytes);
  virtual ~DecompressStream() = default;
  // Writes the next 1..out.size() bytes to `out` (out is not empty) and
  // returns how many; 0 = the end of the data.
  Result<size_t> read(std::span<uint8_t> out);
  // Bytes handed out so far.
  size_t produced() const { return produced_; }
  // A first output chunk size worth allocating (a size the input claims).
  virtual size_t size_hint() const { return 0; }

 protected:
  DecompressStream(const char* codec, size_t max_output_bytes) : codec_(codec), max_(max_output_bytes) {}
  // The codec: 0..out.size() bytes, 0 only at the end of the data.
  virtual Result<size_t> read_some(std::span<uint8_t> out) = 0;

 private:
  const char* codec_;
  size_t max_;
  size_t produced_ = 0;
};

// Appends the compressed form of `input` to `out`. kNone copies.
Status compress_to(Compression codec, ByteView input, Bytes& out, int level = kDefaultCompressionLevel);
Result<Bytes> compress(Compression codec, ByteView input, int level = kDefaultCompressionLevel);

// LZ4 as written inside legacy magic-0 messages (KAFKA-3160): the frame's
// header checksum byte was computed over the magic number + descriptor instead
// of the descriptor alone. Decoding accepts both checksums; encoding writes
// the broken one, which is what magic-0 readers verify.
Status decompress_lz4_legacy_to(ByteView input, Bytes& out, size_t max_output_bytes);
Status compress_lz4_legacy_to(ByteView input, Bytes& out);

// Snappy in snappy-java's xerial framing (32 KiB blocks), which every
// legacy (magic 0/1) reader understands; used when down-converting.
Status compress_snappy_xerial_to(ByteView input, Bytes& out);

// xxHash32 (the LZ4 frame checksum), exposed for tests of the frame header.
uint32_t xxhash32(ByteView data, uint32_t seed);

namespace detail {
// Codec entry points (compression.cc dispatches to them).
Result<std::unique_ptr<DecompressStream>> gzip_stream(ByteView input, size_t max_output_bytes);
Status gzip_compress(ByteView input, Bytes& out, int level);
Status snappy_decompress(ByteView input, Bytes& out, size_t max_output_bytes);
Result<std::unique_ptr<DecompressStream>> snappy_stream(ByteView input, size_t max_output_bytes);
Status snappy_compress(ByteView input, Bytes& out);
Status lz4_decompress(ByteView input, Bytes& out, size_t max_output_bytes);
Result<std::unique_ptr<DecompressStream>> lz4_stream(ByteView input, size_t max_output_bytes);
Status lz4_compress(ByteView input, Bytes& out, int level);
Result<std::unique_ptr<DecompressStream>> zstd_stream(ByteView input, size_t max_output_bytes);
Status zstd_compress(ByteView input, Bytes& out, int level);
// Reads a whole stream into `out` (nothing appended on error).
Status drain(DecompressStream& stream, Bytes& out, size_t max_output_bytes);
Error output_limit_error(const char* codec, size_t max_output_bytes);
}  // namespace detail

}  // namespace samsa

#include "model/compression.h"

#include <gtest/gtest.h>

#include <string>

#include "base/rng.h"

namespace samsa {
namespace {

Bytes from_hex(std::string_view hex) {
  Bytes out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(uint8_t(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

std::string as_string(const Bytes& b) { return std::string(b.begin(), b.end()); }

Bytes sample_text(size_t n) {
  Bytes out;
  const char* words[] = {"kafka ", "samsa ", "broker ", "record ", "batch ", "offset ", "leader ", "isr "};
  Rng rng(42);
  while (out.size() < n) {
    std::string_view w = words[rng.uniform(8)];
    out.insert(out.end(), w.begin(), w.end());
  }
  out.resize(n);
  return out;
}

constexpr Compression kCodecs[] = {Compression::kNone, Compression::kGzip, Compression::kSnappy, Compression::kLz4,
                                   Compression::kZstd};

TEST(Compression, RoundTripEveryCodec) {
  for (size_t size : {size_t(0), size_t(1), size_t(100), size_t(70000), size_t(300000)}) {
    Bytes input = sample_text(size);
    for (Compression c : kCodecs) {
      SCOPED_TRACE(std::string(to_string(c)) + " size " + std::to_string(size));
      Result<Bytes> packed = compress(c, input);
      ASSERT_TRUE(packed.ok()) << packed.error().to_string();
      if (size >= 70000 && c != Compression::kNone) {
        EXPECT_LT(packed->size(), input.size());
      }
      Result<Bytes> plain = decompress(c, *packed);
      ASSERT_TRUE(plain.ok()) << plain.error().to_string();
      EXPECT_EQ(*plain, input);
    }
  }
}

TEST(Compression, CompressLevels) {
  Bytes input = sample_text(5000);
  for (auto [c, level] : {std::pair{Compression::kGzip, 1}, {Compression::kGzip, 9}, {Compression::kLz4, 9},
                          {Compression::kZstd, 1}, {Compression::kZstd, 19}}) {
    Result<Bytes> packed = compress(c, input, level);
    ASSERT_TRUE(packed.ok());
    EXPECT_EQ(*decompress(c, *packed), input);
  }
  EXPECT_FALSE(compress(Compression::kGzip, input, 42).ok());
}

TEST(Compression, AppendsAfterExistingBytes) {
  Bytes input = sample_text(1000);
  for (Compression c : kCodecs) {
    Bytes packed = {9, 9};
    ASSERT_TRUE(compress_to(c, input, packed).ok());
    EXPECT_EQ(packed[0], 9);
    Bytes out = {7};
    ASSERT_TRUE(decompress_to(c, ByteView(packed).subspan(2), out).ok());
    ASSERT_EQ(out.size(), input.size() + 1);
    EXPECT_EQ(out[0], 7);
    EXPECT_TRUE(std::equal(input.begin(), input.end(), out.begin() + 1));
  }
}

// Frames written by the lz4 1.9.4 command line tool (not by us): content
// checksum, and with -BX block checksums too.
TEST(Compression, Lz4ExternalFramesWithChecksums) {
  const std::string expected = "samsa lz4 frame test data, samsa lz4 frame test data, samsa!";
  Bytes block_checksum = from_hex(
      "04224d187440bd26000000ff0c73616d7361206c7a34206672616d65207465737420646174612c201b000950616d7361213265b6ab"
      "00000000b9e54113");
  Bytes content_checksum = from_hex(
      "04224d186440a726000000ff0c73616d7361206c7a34206672616d65207465737420646174612c201b000950616d73612100000000b9e54113");
  EXPECT_EQ(as_string(*decompress(Compression::kLz4, block_checksum)), expected);
  EXPECT_EQ(as_string(*decompress(Compression::kLz4, content_checksum)), expected);
  // A wrong content checksum is caught.
  Bytes bad = content_checksum;
  bad.back() ^= 1;
  EXPECT_FALSE(decompress(Compression::kLz4, bad).ok());
}

// A zstd frame streamed by the zstd 1.5.4 CLI from stdin: no content size.
TEST(Compression, ZstdExternalFrameWithoutContentSize) {
  Bytes frame = from_hex("28b52ffd0458150100e073616d7361206c7a34206672616d65207465737420646174612c202101003b3ec74c2abcf2");
  EXPECT_EQ(as_string(*decompress(Compression::kZstd, frame)),
            "samsa lz4 frame test data, samsa lz4 frame test data, samsa!");
  Bytes two = frame;
  two.insert(two.end(), frame.begin(), frame.end());
  EXPECT_EQ(decompress(Compression::kZstd, two)->size(), 2 * 60u);
}

// Two gzip members written by gzip(1), concatenated.
TEST(Compression, GzipMultiMember) {
  Bytes members = from_hex(
      "1f8b08000000000000034bcb2c2a2e51c84dcd4d4a2d520000713d3ed10d0000001f8b08000000000000032b4e4dcecf4b51c84dcd4d4a"
      "2d02002474fa9f0d000000");
  EXPECT_EQ(as_string(*decompress(Compression::kGzip, members)), "first member second member");
  Bytes padded = members;
  padded.resize(padded.size() + 8, 0);
  EXPECT_EQ(as_string(*decompress(Compression::kGzip, padded)), "first member second member");
}

TEST(Compression, SnappyXerialFraming) {
  Bytes input = sample_text(100000);
  // Frame it the way snappy-java does: header, then [len][raw block] per 32 KiB.
  Bytes framed = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1};
  for (size_t at = 0; at < input.size(); at += 32768) {
    size_t n = std::min<size_t>(32768, input.size() - at);
    Bytes block = *compress(Compression::kSnappy, ByteView(input).subspan(at, n));
    uint8_t len[4];
    store_be32(len, uint32_t(block.size()));
    framed.insert(framed.end(), len, len + 4);
    framed.insert(framed.end(), block.begin(), block.end());
  }
  EXPECT_EQ(*decompress(Compression::kSnappy, framed), input);
  // A block length past the end is corrupt, not a crash.
  Bytes cut(framed.begin(), framed.end() - 10);
  Result<Bytes> r = decompress(Compression::kSnappy, cut);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kCorrupt);
}

TEST(Compression, GarbageAndTruncationAreCorrupt) {
  Bytes input = sample_text(20000);
  for (Compression c : {Compression::kGzip, Compression::kSnappy, Compression::kLz4, Compression::kZstd}) {
    SCOPED_TRACE(to_string(c));
    Bytes packed = *compress(c, input);
    for (size_t keep : {size_t(0), size_t(1), packed.size() / 2, packed.size() - 1}) {
      Result<Bytes> r = decompress(c, ByteView(packed).first(keep));
      EXPECT_FALSE(r.ok()) << "kept " << keep;
    }
    Bytes garbage = sample_text(300);
    EXPECT_FALSE(decompress(c, garbage).ok());
  }
}

TEST(Compression, ZipBombIsBounded) {
  Bytes zeros(8 << 20, 0);  // 8 MiB of zeros compresses to a few KiB
  for (Compression c : {Compression::kGzip, Compression::kSnappy, Compression::kLz4, Compression::kZstd}) {
    SCOPED_TRACE(to_string(c));
    Bytes packed = *compress(c, zeros);
    EXPECT_LT(packed.size(), zeros.size() / 20);
    Result<Bytes> r = decompress(c, packed, 1 << 20);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind(), ErrorKind::kInvalidArgument);
    // Exactly at the bound is fine.
    EXPECT_TRUE(decompress(c, packed, zeros.size()).ok());
    Bytes out;
    EXPECT_FALSE(decompress_to(c, packed, out, zeros.size() - 1).ok());
    EXPECT_TRUE(out.empty());  // nothing left behind on failure
  }
}

TEST(Compression, UnknownCodec) {
  Result<Bytes> r = decompress(Compression(6), Bytes{1, 2, 3});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kUnsupported);
  EXPECT_FALSE(is_known_compression(5));
  EXPECT_TRUE(is_known_compression(4));
}

TEST(Compression, XxHash32KnownValues) {
  // Reference values of XXH32 (seed 0) from the xxHash test vectors.
  EXPECT_EQ(xxhash32({}, 0), 0x02CC5D05u);
  EXPECT_EQ(xxhash32(as_bytes("a"), 0), 0x550D7456u);
  EXPECT_EQ(xxhash32(as_bytes("abc"), 0), 0x32D153FFu);
  EXPECT_EQ(xxhash32(as_bytes("Nobody inspects the spammish repetition"), 0), 0xE2293B2Fu);
}

TEST(Compression, Lz4HeaderChecksumMatchesLiblz4) {
  Bytes frame = *compress(Compression::kLz4, as_bytes("abc"));
  // Magic (4) + FLG + BD, then the header checksum byte.
  EXPECT_EQ(frame[6], uint8_t(xxhash32(ByteView(frame).subspan(4, 2), 0) >> 8));
}

TEST(Compression, Lz4LegacyBrokenChecksum) {
  Bytes input = sample_text(5000);
  Bytes legacy;
  ASSERT_TRUE(compress_lz4_legacy_to(input, legacy).ok());
  EXPECT_EQ(legacy[6], uint8_t(xxhash32(ByteView(legacy).subspan(0, 6), 0) >> 8));
  // The standard decoder refuses it (unless the two checksums collide).
  if (legacy[6] != uint8_t(xxhash32(ByteView(legacy).subspan(4, 2), 0) >> 8)) {
    EXPECT_FALSE(decompress(Compression::kLz4, legacy).ok());
  }
  Bytes out;
  ASSERT_TRUE(decompress_lz4_legacy_to(legacy, out, kDefaultMaxDecompressedBytes).ok());
  EXPECT_EQ(out, input);
  // The legacy reader also takes a correct frame.
  out.clear();
  ASSERT_TRUE(decompress_lz4_legacy_to(*compress(Compression::kLz4, input), out, kDefaultMaxDecompressedBytes).ok());
  EXPECT_EQ(out, input);
}

}  // namespace
}  // namespace samsa

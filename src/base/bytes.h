#pragma once
// Byte vocabulary: ByteView (borrowed, read-only), Bytes (owned), and
// big-endian loads/stores (Kafka's wire and disk integers are big-endian).

#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

namespace samsa {

using ByteView = std::span<const uint8_t>;
using Bytes = std::vector<uint8_t>;

inline ByteView as_bytes(std::string_view s) {
  return ByteView(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}
inline std::string_view as_string_view(ByteView b) {
  return std::string_view(reinterpret_cast<const char*>(b.data()), b.size());
}

inline uint16_t load_be16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }
inline uint32_t load_be32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return __builtin_bswap32(v);
}
inline uint64_t load_be64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return __builtin_bswap64(v);
}
inline void store_be16(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v >> 8);
  p[1] = uint8_t(v);
}
inline void store_be32(uint8_t* p, uint32_t v) {
  v = __builtin_bswap32(v);
  std::memcpy(p, &v, 4);
}
inline void store_be64(uint8_t* p, uint64_t v) {
  v = __builtin_bswap64(v);
  std::memcpy(p, &v, 8);
}

}  // namespace samsa

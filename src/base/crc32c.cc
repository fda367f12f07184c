#include "base/crc32c.h"

#include <array>
#include <cstring>

namespace samsa {
namespace {

constexpr uint32_t kPolyReflected = 0x82F63B78;

constexpr std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPolyReflected : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr auto kTable = make_table();

uint32_t crc32c_portable(uint32_t crc, const uint8_t* p, size_t n) {
  crc = ~crc;
  while (n--) crc = kTable[(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return ~crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(uint32_t crc, const uint8_t* p, size_t n) {
  uint64_t c = ~crc;
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c = __builtin_ia32_crc32di(c, word);
    p += 8;
    n -= 8;
  }
  uint32_t c32 = uint32_t(c);
  while (n--) c32 = __builtin_ia32_crc32qi(c32, *p++);
  return ~c32;
}

bool has_sse42() {
  static const bool supported = __builtin_cpu_supports("sse4.2");
  return supported;
}
#endif

}  // namespace

uint32_t crc32c_extend(uint32_t crc, ByteView data) {
#if defined(__x86_64__)
  if (has_sse42()) return crc32c_sse42(crc, data.data(), data.size());
#endif
  return crc32c_portable(crc, data.data(), data.size());
}

}  // namespace samsa

#include "protocol/uuid.h"

namespace samsa::protocol {

std::string Uuid::to_string() const {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  out.reserve(22);
  // 16 bytes = five 3-byte groups (20 chars) + one byte (2 chars).
  for (size_t i = 0; i + 3 <= bytes.size(); i += 3) {
    uint32_t v = uint32_t(bytes[i]) << 16 | uint32_t(bytes[i + 1]) << 8 | bytes[i + 2];
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(kAlphabet[(v >> 6) & 63]);
    out.push_back(kAlphabet[v & 63]);
  }
  uint32_t last = bytes[15];
  out.push_back(kAlphabet[(last >> 2) & 63]);
  out.push_back(kAlphabet[(last << 4) & 63]);
  return out;
}

}  // namespace samsa::protocol

#include "model/uuid.h"

#include "base/bytes.h"
#include "base/rng.h"

namespace samsa {
namespace {
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int decode_char(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '-') return 62;
  if (c == '_') return 63;
  return -1;
}
}  // namespace

bool Uuid::is_zero() const {
  for (uint8_t b : bytes)
    if (b) return false;
  return true;
}

std::string Uuid::to_string() const {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (uint8_t b : bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += kAlphabet[(acc >> bits) & 63];
    }
  }
  if (bits > 0) out += kAlphabet[(acc << (6 - bits)) & 63];
  return out;  // 16 bytes -> 22 characters
}

std::optional<Uuid> Uuid::parse(std::string_view text) {
  if (text.size() != 22) return std::nullopt;
  Uuid u;
  uint32_t acc = 0;
  int bits = 0;
  size_t n = 0;
  for (char c : text) {
    int v = decode_char(c);
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      if (n == 16) break;
      u.bytes[n++] = uint8_t(acc >> bits);
    }
  }
  if (n != 16) return std::nullopt;
  return u;
}

Uuid Uuid::random(Rng& rng) {
  Uuid u;
  do {
    store_be64(u.bytes.data(), rng.next_u64());
    store_be64(u.bytes.data() + 8, rng.next_u64());
    u.bytes[6] = uint8_t((u.bytes[6] & 0x0f) | 0x40);  // version 4
    u.bytes[8] = uint8_t((u.bytes[8] & 0x3f) | 0x80);  // IETF variant
  } while (u.is_zero());
  return u;
}

}  // namespace samsa

#include "base/crc32c.h"

#include <array>
#include <cstddef>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace samsa {
namespace {

// Bit i of a 32-bit crc value is the coefficient of x^(31-i) ("reflected"),
// so the polynomial P = x^32 + x^28 + ... + 1 without its x^32 term reads:
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

// The x86 path. The crc32 instruction takes 3 cycles but can start every
// cycle, so one dependent chain of them runs at a third of the possible
// speed. Long inputs are therefore cut into rounds of three equal blocks
// A, B, C of N bytes whose crcs run side by side, combined at the end of
// each round.
//
// The combination rests on the crc state (the register between the
// inversions) being linear: a state s carried over a message M becomes
// s * x^(8|M|) + (the state M gives from 0), mod P. So a round takes s to
//   s * x^(24N) + a * x^(16N) + b * x^(8N) + c
// with a, b, c the states of A, B, C each started from 0. Starting all three
// from 0 keeps the incoming state out of the chains: a round's chains never
// wait for the previous round's combination.
//
// Multiplying by x^(8k) mod P takes a carry-less multiply by a constant
// (shift_constant) and one crc32 to reduce the 64-bit product; the products
// are summed before that reduction, which is linear too.

// x^k mod P. In the reflected form 1 is the top bit, and multiplying by x is
// a right shift that folds the x^32 falling off the end back in as P.
constexpr uint32_t x_pow_mod_p(size_t k) {
  uint32_t v = 0x80000000;
  while (k--) v = (v >> 1) ^ ((v & 1) ? kPolyReflected : 0);
  return v;
}

// The constant K that moves a state over `bytes` zero bytes: the carry-less
// product of two reflected 32-bit values is the reflected 64-bit value of
// state * K * x, and the crc32 of those 64 bits from state 0 multiplies by
// x^32 and reduces mod P. Hence K = x^(8 * bytes - 33).
constexpr uint32_t shift_constant(size_t bytes) { return x_pow_mod_p(8 * bytes - 33); }

inline uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

__attribute__((target("pclmul"))) inline __m128i clmul(uint64_t state, uint32_t k) {
  return _mm_clmulepi64_si128(_mm_cvtsi64_si128(int64_t(state)), _mm_cvtsi32_si128(int(k)), 0);
}

// Carries `state` over as many whole rounds of 3 * N bytes as [p, p + n)
// holds; advances p and n past them.
template <size_t N>
__attribute__((target("sse4.2,pclmul"))) inline uint64_t crc_rounds_of_three(uint64_t state,
                                                                               const uint8_t*& p, size_t& n) {
  static_assert(N % 8 == 0 && 8 * N > 33);
  constexpr uint32_t kOverA = shift_constant(2 * N);  // a is followed by B and C
  constexpr uint32_t kOverB = shift_constant(N);
  constexpr uint32_t kOverRound = shift_constant(3 * N);
  for (; n >= 3 * N; p += 3 * N, n -= 3 * N) {
    uint64_t a = 0, b = 0, c = 0;
    for (size_t i = 0; i < N; i += 8) {
      a = __builtin_ia32_crc32di(a, load64(p + i));
      b = __builtin_ia32_crc32di(b, load64(p + N + i));
      c = __builtin_ia32_crc32di(c, load64(p + 2 * N + i));
    }
    __m128i product = _mm_xor_si128(clmul(state, kOverRound), clmul(a, kOverA));
    product = _mm_xor_si128(product, clmul(b, kOverB));
    state = __builtin_ia32_crc32di(0, uint64_t(_mm_cvtsi128_si64(product))) ^ c;
  }
  return state;
}

__attribute__((target("sse4.2"))) inline uint64_t crc_one_stream(uint64_t state, const uint8_t* p, size_t n) {
  for (; n >= 8; p += 8, n -= 8) state = __builtin_ia32_crc32di(state, load64(p));
  uint32_t state32 = uint32_t(state);
  while (n--) state32 = __builtin_ia32_crc32qi(state32, *p++);
  return state32;
}

// Rounds of 3 x 256 bytes for the bulk, of 3 x 64 for what is left, one
// chain for the last bytes and for inputs too short for a round. Measured on
// an AMD EPYC, 256 and 64 beat 128/32, 256/32 and 512/64.
constexpr size_t kLongBlock = 256;
constexpr size_t kShortBlock = 64;
constexpr size_t kShortestInterleaved = 3 * kShortBlock;

// The functions holding the loops align them to 32 bytes whatever the build
// flags: on an AMD EPYC the single-chain loop took 30% longer over 64 bytes
// when it happened to straddle a 32-byte boundary.
#define SAMSA_CRC_FUNCTION(features) __attribute__((target(features), optimize("align-loops=32")))

SAMSA_CRC_FUNCTION("sse4.2,pclmul") uint64_t crc_interleaved(uint64_t state, const uint8_t* p, size_t n) {
  state = crc_rounds_of_three<kLongBlock>(state, p, n);
  state = crc_rounds_of_three<kShortBlock>(state, p, n);
  return crc_one_stream(state, p, n);
}

bool has_sse42() {
  static const bool supported = __builtin_cpu_supports("sse4.2");
  return supported;
}

bool has_pclmul() {
  static const bool supported = __builtin_cpu_supports("pclmul");
  return supported;
}

// Out of line so that the short inputs' path stays free of its cost (the
// first-call check of has_pclmul costs saved registers).
SAMSA_CRC_FUNCTION("sse4.2") __attribute__((noinline)) uint64_t crc_long(uint64_t state, const uint8_t* p,
                                                                         size_t n) {
  if (has_pclmul()) return crc_interleaved(state, p, n);
  return crc_one_stream(state, p, n);
}

SAMSA_CRC_FUNCTION("sse4.2") uint32_t crc32c_sse42(uint32_t crc, const uint8_t* p, size_t n) {
  uint64_t state = ~crc;
  if (n >= kShortestInterleaved) return ~uint32_t(crc_long(state, p, n));
  return ~uint32_t(crc_one_stream(state, p, n));
}

#undef SAMSA_CRC_FUNCTION

#endif

}  // namespace

uint32_t crc32c_extend(uint32_t crc, ByteView data) {
#if defined(__x86_64__)
  if (has_sse42()) return crc32c_sse42(crc, data.data(), data.size());
#endif
  return crc32c_portable(crc, data.data(), data.size());
}

}  // namespace samsa

#pragma once
// Shared by the libFuzzer targets of tests/fuzz (docs/testing.md, "Fuzzing").
// Each target is one LLVMFuzzerTestOneInput over untrusted bytes; a broken
// property is reported with FUZZ_CHECK, which aborts so that libFuzzer keeps
// the input as a crash (ASan/UBSan and ASSERT abort the same way).

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "base/bytes.h"
#include "base/log.h"

#define FUZZ_CHECK(cond)                                                         \
  do {                                                                           \
    if (!(cond)) [[unlikely]] {                                                  \
      std::fprintf(stderr, "FUZZ_CHECK failed: %s at %s:%d\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                              \
    }                                                                            \
  } while (0)

namespace samsa::fuzz {

// Consumes a fuzzer input front to back: fixed-size choices first, then the
// payload. Reads past the end give zeros, so every input is usable.
class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  uint8_t u8() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint16_t u16() { return uint16_t(u8() << 8 | u8()); }
  uint32_t u32() { return uint32_t(u16()) << 16 | u16(); }
  // The next n bytes (fewer at the end).
  ByteView bytes(size_t n) {
    n = n < size_ - pos_ ? n : size_ - pos_;
    ByteView v(data_ + pos_, n);
    pos_ += n;
    return v;
  }
  ByteView rest() { return bytes(size_ - pos_); }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// Recovery logs at INFO/WARN for every input; errors are still shown.
inline void quiet_logs() { set_log_level(LogLevel::kError); }

}  // namespace samsa::fuzz

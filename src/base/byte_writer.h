#pragma once
// ByteWriter: appends big-endian integers, varints and raw bytes to a Bytes
// buffer it does not own. Reserve up front on hot paths; it never shrinks.

#include <cstdint>
#include <string_view>

#include "base/bytes.h"

namespace samsa {

class ByteWriter {
 public:
  explicit ByteWriter(Bytes& out) : out_(out) {}

  size_t size() const { return out_.size(); }
  Bytes& buffer() { return out_; }

  void write_i8(int8_t v) { out_.push_back(uint8_t(v)); }
  void write_i16(int16_t v);
  void write_i32(int32_t v);
  void write_i64(int64_t v);
  void write_u32(uint32_t v) { write_i32(int32_t(v)); }
  void write_f64(double v);
  void write_uvarint(uint32_t v);
  void write_uvarlong(uint64_t v);
  void write_varint(int32_t v) { write_uvarint((uint32_t(v) << 1) ^ uint32_t(v >> 31)); }
  void write_varlong(int64_t v) { write_uvarlong((uint64_t(v) << 1) ^ uint64_t(v >> 63)); }
  void write_bytes(ByteView b) { out_.insert(out_.end(), b.begin(), b.end()); }
  void write_string(std::string_view s) { write_bytes(as_bytes(s)); }

  // Reserves n bytes to be filled in later (e.g. a length or CRC) and
  // returns their position.
  size_t reserve(size_t n) {
    size_t at = out_.size();
    out_.resize(at + n);
    return at;
  }
  void patch_i32(size_t at, int32_t v) { store_be32(out_.data() + at, uint32_t(v)); }

 private:
  Bytes& out_;
};

// Encoded sizes, for computing lengths before writing.
int uvarint_size(uint64_t v);
inline int varint_size(int32_t v) { return uvarint_size((uint32_t(v) << 1) ^ uint32_t(v >> 31)); }
inline int varlong_size(int64_t v) { return uvarint_size((uint64_t(v) << 1) ^ uint64_t(v >> 63)); }

}  // namespace samsa

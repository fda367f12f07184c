#pragma once
// ByteReader: bounded reads from untrusted bytes. Every read checks the bytes
// remaining; a read past the end (or a malformed varint) returns 0/empty and
// sets a sticky failure flag, so a decoder reads a whole structure and checks
// ok() once. It never allocates and never throws.

#include <cstdint>
#include <string_view>

#include "base/bytes.h"

namespace samsa {

class ByteReader {
 public:
  explicit ByteReader(ByteView data) : data_(data) {}

  bool ok() const { return !failed_; }
  // Marks the input as malformed (e.g. a length that is negative).
  void fail() { failed_ = true; }
  size_t position() const { return pos_; }
  size_t remaining() const { return failed_ ? 0 : data_.size() - pos_; }
  bool at_end() const { return remaining() == 0; }

  int8_t read_i8();
  int16_t read_i16();
  int32_t read_i32();
  int64_t read_i64();
  uint8_t read_u8() { return uint8_t(read_i8()); }
  uint16_t read_u16() { return uint16_t(read_i16()); }
  uint32_t read_u32() { return uint32_t(read_i32()); }
  double read_f64();

  // Protobuf-style unsigned varint, at most 5 bytes (32 bit) / 10 (64 bit).
  uint32_t read_uvarint();
  uint64_t read_uvarlong();
  // Zig-zag signed varints (record fields).
  int32_t read_varint();
  int64_t read_varlong();

  // The next n bytes, borrowed from the input; empty and failed if fewer remain.
  ByteView read_bytes(size_t n);
  std::string_view read_string_view(size_t n) { return as_string_view(read_bytes(n)); }
  void skip(size_t n) { (void)read_bytes(n); }

  // The unread rest of the input.
  ByteView rest() const { return failed_ ? ByteView() : data_.subspan(pos_); }

 private:
  bool need(size_t n) {
    if (failed_ || data_.size() - pos_ < n) {
      failed_ = true;
      return false;
    }
    return true;
  }

  ByteView data_;
  size_t pos_ = 0;
  bool failed_ = false;
};

}  // namespace samsa

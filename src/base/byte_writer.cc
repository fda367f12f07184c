#include "base/byte_writer.h"

#include <cstring>

namespace samsa {

void ByteWriter::write_i16(int16_t v) {
  uint8_t b[2];
  store_be16(b, uint16_t(v));
  out_.insert(out_.end(), b, b + 2);
}

void ByteWriter::write_i32(int32_t v) {
  uint8_t b[4];
  store_be32(b, uint32_t(v));
  out_.insert(out_.end(), b, b + 4);
}

void ByteWriter::write_i64(int64_t v) {
  uint8_t b[8];
  store_be64(b, uint64_t(v));
  out_.insert(out_.end(), b, b + 8);
}

void ByteWriter::write_f64(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  write_i64(int64_t(bits));
}

void ByteWriter::write_uvarint(uint32_t v) { write_uvarlong(v); }

void ByteWriter::write_uvarlong(uint64_t v) {
  uint8_t b[10];
  int n = 0;
  while (v >= 0x80) {
    b[n++] = uint8_t(v | 0x80);
    v >>= 7;
  }
  b[n++] = uint8_t(v);
  out_.insert(out_.end(), b, b + n);
}

int uvarint_size(uint64_t v) {
  int n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

}  // namespace samsa

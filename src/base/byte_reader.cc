#include "base/byte_reader.h"

#include <cstring>

namespace samsa {

int8_t ByteReader::read_i8() {
  if (!need(1)) return 0;
  return int8_t(data_[pos_++]);
}

int16_t ByteReader::read_i16() {
  if (!need(2)) return 0;
  int16_t v = int16_t(load_be16(data_.data() + pos_));
  pos_ += 2;
  return v;
}

int32_t ByteReader::read_i32() {
  if (!need(4)) return 0;
  int32_t v = int32_t(load_be32(data_.data() + pos_));
  pos_ += 4;
  return v;
}

int64_t ByteReader::read_i64() {
  if (!need(8)) return 0;
  int64_t v = int64_t(load_be64(data_.data() + pos_));
  pos_ += 8;
  return v;
}

double ByteReader::read_f64() {
  uint64_t bits = uint64_t(read_i64());
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

uint64_t ByteReader::read_uvarlong() {
  uint64_t result = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (!need(1)) return 0;
    uint8_t b = data_[pos_++];
    result |= uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) return result;
  }
  failed_ = true;  // more than 10 bytes: malformed
  return 0;
}

uint32_t ByteReader::read_uvarint() {
  uint32_t result = 0;
  for (int shift = 0; shift < 35; shift += 7) {
    if (!need(1)) return 0;
    uint8_t b = data_[pos_++];
    if (shift == 28 && (b & 0xf0)) break;  // would overflow 32 bits
    result |= uint32_t(b & 0x7f) << shift;
    if (!(b & 0x80)) return result;
  }
  failed_ = true;
  return 0;
}

int32_t ByteReader::read_varint() {
  uint32_t z = read_uvarint();
  return int32_t((z >> 1) ^ -(z & 1));
}

int64_t ByteReader::read_varlong() {
  uint64_t z = read_uvarlong();
  return int64_t((z >> 1) ^ -(z & 1));
}

ByteView ByteReader::read_bytes(size_t n) {
  if (!need(n)) return {};
  ByteView v = data_.subspan(pos_, n);
  pos_ += n;
  return v;
}

}  // namespace samsa

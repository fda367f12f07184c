#include "protocol/codec.h"

#include <algorithm>

#include "base/assert.h"

namespace samsa::protocol {

void Encoder::write_length(bool flex, int32_t n, bool int16_length) {
  // n == -1 is null: compact 0, else -1.
  if (flex) {
    w_.write_uvarint(uint32_t(n + 1));
  } else if (int16_length) {
    w_.write_i16(int16_t(n));
  } else {
    w_.write_i32(n);
  }
}

void Encoder::write_string(bool flex, std::string_view s) {
  ASSERT_MSG(s.size() <= 0x7fff, "string longer than Kafka's int16 limit");
  write_length(flex, int32_t(s.size()), true);
  w_.write_string(s);
}

void Encoder::write_nullable_string(bool flex, const std::optional<std::string>& s, bool nullable) {
  if (s) {
    write_string(flex, *s);
  } else {
    write_length(flex, nullable ? -1 : 0, true);
  }
}

void Encoder::write_bytes(bool flex, ByteView b) {
  write_length(flex, int32_t(b.size()), false);
  w_.write_bytes(b);
}

void Encoder::write_nullable_bytes(bool flex, const std::optional<Bytes>& b, bool nullable) {
  if (b) {
    write_bytes(flex, *b);
  } else {
    write_length(flex, nullable ? -1 : 0, false);
  }
}

void Encoder::write_records(bool flex, const RecordSet& records, bool nullable) {
  if (records.is_null()) {
    write_length(flex, nullable ? -1 : 0, false);
  } else if (records.is_file()) {
    write_length(flex, records.region().size, false);
    out_.append_region(records.region());
  } else {
    write_bytes(flex, records.bytes());
  }
}

void Encoder::write_array_length(bool flex, size_t n) {
  ASSERT(n <= 0x7fffffff);
  write_length(flex, int32_t(n), false);
}

void Encoder::write_null_array(bool flex, bool nullable) { write_length(flex, nullable ? -1 : 0, false); }

void Encoder::write_tagged_field(uint32_t tag, const OutBuffer& value) {
  ASSERT(value.splices().empty());
  w_.write_uvarint(tag);
  w_.write_uvarint(uint32_t(value.bytes().size()));
  w_.write_bytes(value.bytes());
}

namespace {

// Reads a length prefix; -1 means null. Returns false on malformed input.
bool read_length(ByteReader& r, bool flex, bool int16_length, int32_t& n) {
  if (flex) {
    uint32_t v = r.read_uvarint();
    if (!r.ok() || v > 0x7fffffff) return false;
    n = int32_t(v) - 1;
  } else {
    n = int16_length ? r.read_i16() : r.read_i32();
    if (!r.ok() || n < -1) return false;
  }
  return true;
}

}  // namespace

bool read_string(ByteReader& r, bool flex, std::string& out) {
  int32_t n;
  if (!read_length(r, flex, true, n) || n < 0 || n > 0x7fff) return false;
  std::string_view s = r.read_string_view(size_t(n));
  if (!r.ok()) return false;
  out.assign(s);
  return true;
}

bool read_nullable_string(ByteReader& r, bool flex, bool nullable, std::optional<std::string>& out) {
  int32_t n;
  if (!read_length(r, flex, true, n) || n > 0x7fff) return false;
  if (n < 0) {
    if (!nullable) return false;
    out.reset();
    return true;
  }
  std::string_view s = r.read_string_view(size_t(n));
  if (!r.ok()) return false;
  out.emplace(s);
  return true;
}

bool read_bytes(ByteReader& r, bool flex, Bytes& out) {
  int32_t n;
  if (!read_length(r, flex, false, n) || n < 0) return false;
  ByteView b = r.read_bytes(size_t(n));
  if (!r.ok()) return false;
  out.assign(b.begin(), b.end());
  return true;
}

bool read_nullable_bytes(ByteReader& r, bool flex, bool nullable, std::optional<Bytes>& out) {
  int32_t n;
  if (!read_length(r, flex, false, n)) return false;
  if (n < 0) {
    if (!nullable) return false;
    out.reset();
    return true;
  }
  ByteView b = r.read_bytes(size_t(n));
  if (!r.ok()) return false;
  out.emplace(b.begin(), b.end());
  return true;
}

bool read_records(ByteReader& r, bool flex, bool nullable, RecordSet& out) {
  int32_t n;
  if (!read_length(r, flex, false, n)) return false;
  if (n < 0) {
    if (!nullable) return false;
    out = RecordSet();
    return true;
  }
  ByteView b = r.read_bytes(size_t(n));
  if (!r.ok()) return false;
  out = RecordSet::borrowed(b);
  return true;
}

bool read_array_length(ByteReader& r, bool flex, size_t min_element_size, int32_t& count) {
  if (!read_length(r, flex, false, count) || count > kMaxArrayElements) return false;
  if (count > 0 && size_t(count) > r.remaining() / min_element_size) return false;
  return true;
}

Uuid read_uuid(ByteReader& r) {
  Uuid u;
  ByteView b = r.read_bytes(16);
  if (r.ok()) std::copy(b.begin(), b.end(), u.bytes.begin());
  return u;
}

bool read_tagged_field_count(ByteReader& r, uint32_t& count) {
  count = r.read_uvarint();
  return r.ok() && count <= kMaxTaggedFields;
}

bool skip_tagged_fields(ByteReader& r) {
  uint32_t count;
  if (!read_tagged_field_count(r, count)) return false;
  for (uint32_t i = 0; i < count && r.ok(); ++i) {
    (void)r.read_uvarint();  // tag
    r.skip(r.read_uvarint());
  }
  return r.ok();
}

bool records_equal(const RecordSet& a, const RecordSet& b) {
  if (a.is_null() || b.is_null()) return a.is_null() == b.is_null();
  if (a.is_file() || b.is_file()) {
    if (!a.is_file() || !b.is_file()) return false;
    return a.region().file == b.region().file && a.region().position == b.region().position &&
           a.region().size == b.region().size;
  }
  ByteView x = a.bytes(), y = b.bytes();
  return x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin());
}

}  // namespace samsa::protocol

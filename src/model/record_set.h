#pragma once
// RecordSet: the value of a Kafka RECORDS field. It is null, bytes borrowed
// from a request frame (produce: validated and appended without a copy),
// bytes owned (down-converted or built), or a region of a segment file
// (fetch: sent with sendfile). The protocol codec reads and writes it.

#include <optional>
#include <variant>

#include "base/bytes.h"
#include "base/file_region.h"

namespace samsa {

class RecordSet {
 public:
  RecordSet() = default;  // null
  static RecordSet borrowed(ByteView bytes) { return RecordSet(Storage(bytes)); }
  static RecordSet owned(Bytes bytes) { return RecordSet(Storage(std::move(bytes))); }
  static RecordSet file(FileRegion region) { return RecordSet(Storage(std::move(region))); }

  bool is_null() const { return std::holds_alternative<std::monostate>(storage_); }
  bool is_file() const { return std::holds_alternative<FileRegion>(storage_); }
  size_t size() const;

  // The bytes, when in memory (borrowed or owned); empty for null and file.
  ByteView bytes() const;
  // Mutable access to borrowed or owned bytes, for in-place offset
  // assignment on produce. The request frame owns borrowed bytes and is
  // writable; see broker/connection.
  uint8_t* mutable_data() const { return const_cast<uint8_t*>(bytes().data()); }
  const FileRegion& region() const { return std::get<FileRegion>(storage_); }

 private:
  using Storage = std::variant<std::monostate, ByteView, Bytes, FileRegion>;
  explicit RecordSet(Storage s) : storage_(std::move(s)) {}
  Storage storage_;
};

inline size_t RecordSet::size() const {
  if (auto* v = std::get_if<ByteView>(&storage_)) return v->size();
  if (auto* b = std::get_if<Bytes>(&storage_)) return b->size();
  if (auto* f = std::get_if<FileRegion>(&storage_)) return size_t(f->size);
  return 0;
}

inline ByteView RecordSet::bytes() const {
  if (auto* v = std::get_if<ByteView>(&storage_)) return *v;
  if (auto* b = std::get_if<Bytes>(&storage_)) return ByteView(*b);
  return {};
}

}  // namespace samsa

#pragma once
// OutBuffer: a message to send, as bytes with file regions spliced in at
// given positions. Encoders append bytes and, for record data that lives in
// a segment file, a FileRegion instead of a copy; the connection writes the
// bytes with write/writev and the regions with sendfile (zero copy).

#include <cstddef>
#include <vector>

#include "base/bytes.h"
#include "base/file_region.h"

namespace samsa {

class OutBuffer {
 public:
  struct Splice {
    size_t at;  // position in bytes() before which the region is sent
    FileRegion region;
  };

  Bytes& bytes() { return bytes_; }
  const Bytes& bytes() const { return bytes_; }
  const std::vector<Splice>& splices() const { return splices_; }

  // Appends a region after the bytes written so far.
  void append_region(FileRegion region) { splices_.push_back(Splice{bytes_.size(), std::move(region)}); }

  // Total size on the wire: bytes plus every region.
  size_t total_size() const {
    size_t n = bytes_.size();
    for (const auto& s : splices_) n += size_t(s.region.size);
    return n;
  }

 private:
  Bytes bytes_;
  std::vector<Splice> splices_;
};

}  // namespace samsa

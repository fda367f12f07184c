#pragma once
// Private to the codec implementations: an output buffer that grows in chunks
// and never beyond a bound, so a decompressor fed hostile input stops at the
// limit instead of allocating whatever the input claims.

#include <algorithm>
#include <cstddef>
#include <span>

#include "base/bytes.h"

namespace samsa::detail {

class BoundedOutput {
 public:
  // Appends to `out`; at most `max_bytes` may be produced. `size_hint` seeds
  // the first chunk (e.g. a size the input claims, still capped by the bound).
  BoundedOutput(Bytes& out, size_t max_bytes, size_t size_hint)
      : out_(out), start_(out.size()), used_(out.size()), max_(max_bytes),
        next_chunk_(std::clamp<size_t>(size_hint, 4096, size_t(1) << 20)) {}

  // Writable space after the committed bytes; empty once max_bytes + 1 bytes
  // have been produced (the extra byte detects "more than the bound").
  std::span<uint8_t> space() {
    if (used_ == out_.size()) {
      size_t produced = used_ - start_;
      if (produced > max_) return {};
      size_t add = std::min(next_chunk_, max_ + 1 - produced);
      out_.resize(used_ + add);
      next_chunk_ = std::min(next_chunk_ * 2, size_t(16) << 20);
    }
    return {out_.data() + used_, out_.size() - used_};
  }
  void commit(size_t n) { used_ += n; }
  bool exceeded() const { return used_ - start_ > max_; }
  size_t produced() const { return used_ - start_; }
  // Drops the unused tail of the last chunk.
  void finish() { out_.resize(used_); }
  // Drops everything this object appended (on error).
  void abandon() { out_.resize(start_); }

 private:
  Bytes& out_;
  size_t start_;
  size_t used_;
  size_t max_;
  size_t next_chunk_;
};

}  // namespace samsa::detail

#include "cli/bench_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace samsa::cli {

int LatencyHistogram::bucket_of(int64_t ns) {
  uint64_t v = ns < 0 ? 0 : uint64_t(ns);
  if (v < (1u << kSubBits)) return int(v);
  int e = 63 - std::countl_zero(v);  // >= kSubBits
  int shift = e - (kSubBits - 1);
  return shift * kHalf + int(v >> shift);
}

int64_t LatencyHistogram::bucket_low(int bucket) {
  if (bucket < (1 << kSubBits)) return bucket;
  int shift = bucket / kHalf - 1;
  int64_t top = bucket - shift * kHalf;
  return top << shift;
}

int64_t LatencyHistogram::bucket_high(int bucket) {
  if (bucket < (1 << kSubBits)) return bucket + 1;
  int shift = bucket / kHalf - 1;
  return bucket_low(bucket) + (int64_t(1) << shift);
}

void LatencyHistogram::record(int64_t ns) {
  if (ns < 0) ns = 0;
  ++counts_[size_t(bucket_of(ns))];
  ++count_;
  min_ = std::min(min_, ns);
  max_ = std::max(max_, ns);
  sum_ += ns;
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  sum_ += other.sum_;
}

int64_t LatencyHistogram::percentile(double q) const {
  if (count_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  // The rank of the value at q, 1-based: the smallest value with at least
  // ceil(q * count) values at or below it.
  uint64_t rank = std::max<uint64_t>(1, uint64_t(std::ceil(q * double(count_))));
  if (rank >= count_) return max_;  // the maximum is known exactly
  uint64_t seen = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      int b = int(i);
      int64_t mid = bucket_low(b) + (bucket_high(b) - 1 - bucket_low(b)) / 2;
      return std::clamp(mid, min(), max_);
    }
  }
  return max_;
}

}  // namespace samsa::cli

#pragma once
// LatencyHistogram: log-linear histogram of non-negative durations in
// nanoseconds for `samsa bench`, in the spirit of HdrHistogram: 64 linear
// sub-buckets per power of two, so any reported percentile is within 1/64
// (1.6%) of the true value, whatever the range (ns to hours). Fixed size
// (~30 KB), O(1) record, no allocation after construction. Not thread-safe:
// one per thread, merge() at the end.

#include <array>
#include <cstdint>

namespace samsa::cli {

class LatencyHistogram {
 public:
  void record(int64_t ns);
  void merge(const LatencyHistogram& other);
  void reset() { *this = LatencyHistogram(); }

  uint64_t count() const { return count_; }
  int64_t max() const { return max_; }
  int64_t min() const { return count_ == 0 ? 0 : min_; }
  double mean() const { return count_ == 0 ? 0.0 : double(sum_) / double(count_); }
  // The value at quantile q in [0, 1] (the middle of its bucket, clamped to
  // [min, max]; exactly max for the last rank); 0 when empty.
  int64_t percentile(double q) const;

  // Exposed for tests: bucket of a value and the bucket's bounds.
  static int bucket_of(int64_t ns);
  static int64_t bucket_low(int bucket);
  static int64_t bucket_high(int bucket);  // exclusive

 private:
  static constexpr int kSubBits = 7;  // values below 128 are exact
  static constexpr int kHalf = 1 << (kSubBits - 1);
  static constexpr int kBuckets = (63 - (kSubBits - 1)) * kHalf + (1 << kSubBits);

  std::array<uint64_t, kBuckets> counts_{};
  uint64_t count_ = 0;
  int64_t min_ = INT64_MAX;
  int64_t max_ = 0;
  __int128 sum_ = 0;
};

}  // namespace samsa::cli

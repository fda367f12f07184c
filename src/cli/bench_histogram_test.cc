#include "cli/bench_histogram.h"

#include <gtest/gtest.h>

namespace samsa::cli {
namespace {

TEST(LatencyHistogram, SmallValuesAreExact) {
  for (int64_t v = 0; v < 128; ++v) {
    EXPECT_EQ(LatencyHistogram::bucket_of(v), v);
    EXPECT_EQ(LatencyHistogram::bucket_low(int(v)), v);
  }
}

TEST(LatencyHistogram, BucketsAreContiguousAndWithinTwoPercent) {
  int previous = -1;
  for (int64_t v = 1; v < (int64_t(1) << 40); v = v + v / 37 + 1) {
    int b = LatencyHistogram::bucket_of(v);
    EXPECT_GE(b, previous);
    previous = b;
    EXPECT_LE(LatencyHistogram::bucket_low(b), v);
    EXPECT_GT(LatencyHistogram::bucket_high(b), v);
    double width = double(LatencyHistogram::bucket_high(b) - LatencyHistogram::bucket_low(b));
    if (v < 128) EXPECT_EQ(width, 1.0) << v;  // exact
    else EXPECT_LE(width / double(v), 1.0 / 64 + 1e-12) << v;
  }
  // The next bucket starts where this one ends.
  for (int b = 0; b < 3000; ++b) {
    EXPECT_EQ(LatencyHistogram::bucket_high(b), LatencyHistogram::bucket_low(b + 1)) << b;
  }
  EXPECT_LT(LatencyHistogram::bucket_of(INT64_MAX), 3776 + 1);
}

TEST(LatencyHistogram, PercentilesOfAUniformRange) {
  LatencyHistogram h;
  for (int64_t v = 1; v <= 100000; ++v) h.record(v * 1000);  // 1 us .. 100 ms
  EXPECT_EQ(h.count(), 100000u);
  EXPECT_EQ(h.max(), 100000 * 1000);
  EXPECT_EQ(h.min(), 1000);
  EXPECT_NEAR(double(h.percentile(0.5)), 50e6, 50e6 * 0.02);
  EXPECT_NEAR(double(h.percentile(0.99)), 99e6, 99e6 * 0.02);
  EXPECT_NEAR(double(h.percentile(0.999)), 99.9e6, 99.9e6 * 0.02);
  EXPECT_EQ(h.percentile(1.0), h.max());
  EXPECT_NEAR(h.mean(), 50000.5e3, 1.0);
}

TEST(LatencyHistogram, OutlierShowsInTailOnly) {
  LatencyHistogram h;
  for (int i = 0; i < 999; ++i) h.record(1000);
  h.record(5'000'000'000);  // one 5 s stall
  EXPECT_NEAR(double(h.percentile(0.99)), 1000, 16);  // within its bucket
  EXPECT_NEAR(double(h.percentile(0.999)), 1000, 16);
  EXPECT_EQ(h.percentile(1.0), 5'000'000'000);
  EXPECT_EQ(h.max(), 5'000'000'000);
}

TEST(LatencyHistogram, MergeAddsCountsAndKeepsExtremes) {
  LatencyHistogram a, b;
  a.record(10);
  b.record(1'000'000);
  b.record(-5);  // clamped to 0
  a.merge(b);
  EXPECT_EQ(a.count(), 3u);
  EXPECT_EQ(a.min(), 0);
  EXPECT_EQ(a.max(), 1'000'000);
  LatencyHistogram empty;
  EXPECT_EQ(empty.percentile(0.5), 0);
  EXPECT_EQ(empty.min(), 0);
}

}  // namespace
}  // namespace samsa::cli

// Decompression bombs against the produce validation (issue 10, item 5):
// what one hostile batch costs the event loop, per codec. A bomb is
// `records` records sharing `unpacked_mib` MiB of zeros, compressed: a few
// KB on the wire that expand far beyond the decompression bound (64 MiB by
// default). The batch is refused; the figure is the time to refuse it. One
// giant record is the naive bomb; 1 MiB records are the worst case (each
// record within the bound, so the bound's worth is decompressed). For
// comparison, BM_ValidateLargeLegitBatch validates a legitimate compressed
// batch of the same shape that stays within the bound.
//
// Registered into samsa-microbench (microbench_main.cc has the main).

#include <benchmark/benchmark.h>

#include <map>
#include <tuple>
#include <string>

#include "model/record_batch.h"
#include "model/record_batch_builder.h"

namespace samsa {
namespace {

Bytes zeros_batch(Compression codec, size_t total_bytes, int records) {
  RecordBatchOptions options;
  options.compression = codec;
  RecordBatchBuilder builder(options);
  Bytes value(total_bytes / size_t(records), 0);
  for (int i = 0; i < records; ++i) builder.add(1700000000000, std::nullopt, ByteView(value));
  return std::move(builder.build()).value();
}

// Built once per shape: compressing 200 MiB of zeros takes a while.
const Bytes& cached_zeros_batch(Compression codec, size_t total_bytes, int records) {
  static std::map<std::tuple<int, size_t, int>, Bytes> cache;
  auto key = std::make_tuple(int(codec), total_bytes, records);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, zeros_batch(codec, total_bytes, records)).first;
  return it->second;
}

void validate_loop(benchmark::State& state, const Bytes& batch, bool expect_ok) {
  ValidateOptions options;
  options.deep_if_compressed = true;
  for (auto _ : state) {
    RecordsValidation v = validate_records(batch, options);
    if (v.ok() != expect_ok) state.SkipWithError(expect_ok ? "legit batch refused" : "bomb accepted");
    benchmark::DoNotOptimize(v);
  }
  state.counters["wire_bytes"] = double(batch.size());
}

void BM_RefuseBomb(benchmark::State& state) {
  auto codec = Compression(state.range(0));
  const Bytes& bomb = cached_zeros_batch(codec, size_t(state.range(1)) << 20, int(state.range(2)));
  validate_loop(state, bomb, /*expect_ok=*/false);
}
// Snappy is absent: its raw block states its length up front, so a bomb is
// refused before any output is produced (and its ratio is ~20:1 at best).
BENCHMARK(BM_RefuseBomb)
    ->ArgNames({"codec", "unpacked_mib", "records"})
    ->Args({4, 200, 1})
    ->Args({1, 200, 200})
    ->Args({3, 200, 200})
    ->Args({4, 200, 200})
    ->Unit(benchmark::kMillisecond);

void BM_ValidateLargeLegitBatch(benchmark::State& state) {
  auto codec = Compression(state.range(0));
  const Bytes& batch = cached_zeros_batch(codec, size_t(state.range(1)) << 20, 8);
  validate_loop(state, batch, /*expect_ok=*/true);
  state.SetBytesProcessed(int64_t(state.iterations()) * (state.range(1) << 20));
}
BENCHMARK(BM_ValidateLargeLegitBatch)
    ->ArgNames({"codec", "unpacked_mib"})
    ->Args({1, 8})
    ->Args({3, 8})
    ->Args({4, 8})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace samsa

// samsa-microbench: Google Benchmark micro-benchmarks of the pieces on the
// produce and fetch hot paths: CRC32C, varints, batch validation, the
// offset index lookup, and the decode/encode of Produce and Fetch requests
// and responses. Not a test (nothing here can fail on a slow machine);
// `make bench` runs it and keeps its figures with the suite's.

#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

#include "base/byte_reader.h"
#include "base/byte_writer.h"
#include "base/crc32c.h"
#include "model/record_batch.h"
#include "model/record_batch_builder.h"
#include "protocol/codec.h"
#include "protocol/generated/fetch.h"
#include "protocol/generated/produce.h"
#include "io/posix_file_system.h"
#include "storage/offset_index.h"

namespace samsa {
namespace {

Bytes random_bytes(size_t n, uint64_t seed) {
  Bytes b(n);
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& c : b) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c = uint8_t('A' + x % 26);
  }
  return b;
}

// A batch like a librdkafka producer's: `count` records of `size` bytes.
Bytes make_batch(int count, size_t size, Compression compression) {
  RecordBatchOptions options;
  options.compression = compression;
  RecordBatchBuilder builder(options);
  Bytes value = random_bytes(size, 7);
  for (int i = 0; i < count; ++i) builder.add(1700000000000 + i, std::nullopt, ByteView(value));
  auto batch = builder.build();
  return std::move(batch).value();
}

void BM_Crc32c(benchmark::State& state) {
  Bytes data = random_bytes(size_t(state.range(0)), 1);
  for (auto _ : state) benchmark::DoNotOptimize(crc32c(data));
  state.SetBytesProcessed(int64_t(state.iterations()) * state.range(0));
}
BENCHMARK(BM_Crc32c)->Arg(64)->Arg(1024)->Arg(16384)->Arg(1 << 20);

void BM_VarintEncode(benchmark::State& state) {
  Bytes out;
  out.reserve(10 * 1024);
  for (auto _ : state) {
    out.clear();
    ByteWriter w(out);
    for (int64_t i = 0; i < 1024; ++i) w.write_varlong(i * i * 37 - 5000);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * 1024);
}
BENCHMARK(BM_VarintEncode);

void BM_VarintDecode(benchmark::State& state) {
  Bytes buf;
  ByteWriter w(buf);
  for (int64_t i = 0; i < 1024; ++i) w.write_varlong(i * i * 37 - 5000);
  for (auto _ : state) {
    ByteReader r(buf);
    int64_t sum = 0;
    for (int i = 0; i < 1024; ++i) sum += r.read_varlong();
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * 1024);
}
BENCHMARK(BM_VarintDecode);

// What Produce does with a client's batch: header, CRC and every record,
// compressed or not, as Kafka's LogValidator does (deep = 1). deep = 0 is
// what Produce did before issue 10 for uncompressed data (header and CRC
// only), kept to show what the record walk costs in the same run.
void BM_ValidateBatch(benchmark::State& state) {
  auto compression = Compression(state.range(0));
  Bytes batch = make_batch(int(state.range(1)), size_t(state.range(2)), compression);
  ValidateOptions options;
  options.deep_if_compressed = true;
  options.deep = state.range(3) != 0;
  options.timestamps = TimestampPolicy{.now_ms = 1700000000000};
  for (auto _ : state) {
    RecordsValidation v = validate_records(batch, options);
    if (!v.ok()) state.SkipWithError("invalid batch");
    benchmark::DoNotOptimize(v);
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * state.range(1));
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(batch.size()));
}
BENCHMARK(BM_ValidateBatch)
    ->ArgNames({"codec", "records", "size", "deep"})
    ->Args({0, 1000, 100, 0})
    ->Args({0, 1000, 100, 1})
    ->Args({0, 100, 1024, 0})
    ->Args({0, 100, 1024, 1})
    ->Args({3, 1000, 100, 1})
    ->Args({4, 1000, 100, 1});

void BM_OffsetIndexLookup(benchmark::State& state) {
  auto dir = std::filesystem::temp_directory_path() / ("samsa-microbench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  PosixFileSystem files;
  auto index = OffsetIndex::open(files, dir / "00000000000000000000.index", Offset(0), true);
  if (!index.ok()) {
    state.SkipWithError("cannot open index");
    return;
  }
  const int entries = int(state.range(0));
  for (int i = 0; i < entries; ++i) {
    if (!index->append(Offset(int64_t(i) * 100), int64_t(i) * 4096).ok()) break;
  }
  int64_t max_offset = int64_t(entries) * 100;
  int64_t x = 12345;
  for (auto _ : state) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    benchmark::DoNotOptimize(index->lookup(Offset(x % max_offset)));
  }
  state.SetItemsProcessed(int64_t(state.iterations()));
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_OffsetIndexLookup)->Arg(1000)->Arg(100000);

// A Produce request as librdkafka sends it: one topic, `partitions`
// partitions, one ~16 KB batch each.
Bytes produce_request_body(int partitions, int16_t version) {
  protocol::ProduceRequest request;
  request.acks = 1;
  request.timeout_ms = 30000;
  static Bytes batch = make_batch(160, 100, Compression::kNone);
  protocol::ProduceRequest::TopicProduceData topic;
  topic.name = "samsa-bench";
  for (int p = 0; p < partitions; ++p) {
    protocol::ProduceRequest::PartitionProduceData data;
    data.index = p;
    data.records = RecordSet::borrowed(batch);
    topic.partition_data.push_back(std::move(data));
  }
  request.topic_data.push_back(std::move(topic));
  OutBuffer out;
  protocol::Encoder w(out);
  request.encode(w, version);
  return out.bytes();
}

void BM_ProduceRequestDecode(benchmark::State& state) {
  const int16_t version = 9;
  Bytes body = produce_request_body(int(state.range(0)), version);
  for (auto _ : state) {
    protocol::ProduceRequest request;
    ByteReader r(body);
    if (!request.decode(r, version)) state.SkipWithError("decode failed");
    benchmark::DoNotOptimize(request);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(body.size()));
}
BENCHMARK(BM_ProduceRequestDecode)->Arg(1)->Arg(16);

void BM_ProduceResponseEncode(benchmark::State& state) {
  protocol::ProduceResponse response;
  protocol::ProduceResponse::TopicProduceResponse topic;
  topic.name = "samsa-bench";
  for (int p = 0; p < state.range(0); ++p) {
    protocol::ProduceResponse::PartitionProduceResponse part;
    part.index = p;
    part.base_offset = 123456789;
    topic.partition_responses.push_back(part);
  }
  response.responses.push_back(topic);
  for (auto _ : state) {
    OutBuffer out;
    protocol::Encoder w(out);
    response.encode(w, 9);
    benchmark::DoNotOptimize(out.bytes().data());
  }
}
BENCHMARK(BM_ProduceResponseEncode)->Arg(1)->Arg(16);

void BM_FetchRequestDecode(benchmark::State& state) {
  const int16_t version = 11;
  protocol::FetchRequest request;
  request.max_wait_ms = 500;
  request.min_bytes = 1;
  request.max_bytes = 52428800;
  protocol::FetchRequest::FetchTopic topic;
  topic.topic = "samsa-bench";
  for (int p = 0; p < state.range(0); ++p) {
    protocol::FetchRequest::FetchPartition fp;
    fp.partition = p;
    fp.fetch_offset = 1000000 + p;
    fp.partition_max_bytes = 1048576;
    topic.partitions.push_back(fp);
  }
  request.topics.push_back(topic);
  OutBuffer out;
  protocol::Encoder w(out);
  request.encode(w, version);
  Bytes body = out.bytes();
  for (auto _ : state) {
    protocol::FetchRequest decoded;
    ByteReader r(body);
    if (!decoded.decode(r, version)) state.SkipWithError("decode failed");
    benchmark::DoNotOptimize(decoded);
  }
}
BENCHMARK(BM_FetchRequestDecode)->Arg(1)->Arg(16);

// The fetch response as the broker builds it: records are file regions
// spliced into the OutBuffer (sendfile later), never copied.
void BM_FetchResponseEncode(benchmark::State& state) {
  auto file = std::make_shared<const PosixFile>(-1, "none");
  protocol::FetchResponse response;
  protocol::FetchResponse::FetchableTopicResponse topic;
  topic.topic = "samsa-bench";
  for (int p = 0; p < state.range(0); ++p) {
    protocol::FetchResponse::PartitionData part;
    part.partition_index = p;
    part.high_watermark = 5000000;
    part.records = RecordSet::file(FileRegion{file, 4096, 1048576});
    topic.partitions.push_back(part);
  }
  response.responses.push_back(topic);
  for (auto _ : state) {
    OutBuffer out;
    protocol::Encoder w(out);
    response.encode(w, 11);
    benchmark::DoNotOptimize(out.bytes().data());
  }
}
BENCHMARK(BM_FetchResponseEncode)->Arg(1)->Arg(16);

}  // namespace
}  // namespace samsa

BENCHMARK_MAIN();

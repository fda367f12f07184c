// samsa-null-broker: the transport-and-client ceiling for `make bench`.
//
// NOT A BROKER. It speaks Kafka on the same network and protocol path as
// the real one (io/ FrameServer + KafkaConnection, protocol/ generated
// codecs) and answers just enough for librdkafka producers and assigned
// consumers: ApiVersions, Metadata (every topic asked for exists, with the
// partition count CreateTopics gave it or --partitions), CreateTopics,
// FindCoordinator (itself), ListOffsets, Produce and Fetch. Produce is
// decoded and acknowledged with made-up offsets; nothing is validated or
// stored. Fetch serves, at whatever offset is asked, prebuilt batches of
// records of --record-size bytes, or N bytes for a topic whose name holds
// "-rs<N>", sent with sendfile like the real broker's segments: they live
// in a memory file (memfd) of --pool-mb (256) MiB, taken in turn. Same
// transport as the real broker, so the ceiling is not raised by a copy the
// broker never makes: on loopback, a server's memcpy + write leaves the data
// in the shared CPU cache for the client's recv, while sendfile hands the
// client pages it reads from memory (bench/ANALYSIS.md has the
// measurement). The difference between its figures and the real broker's
// is the cost of the broker's own work: validation, storage, indexes, the
// purgatory.
//
// It listens on 127.0.0.1 only and exits after --max-seconds (default 900)
// or on SIGINT/SIGTERM.

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "base/byte_reader.h"
#include "base/bytes.h"
#include "base/clock.h"
#include "base/file_region.h"
#include "base/log.h"
#include "io/frame_server.h"
#include "io/posix_file_system.h"
#include "io/posix_runtime.h"
#include "io/signal_watcher.h"
#include "model/record_batch_builder.h"
#include "model/record_batch_header.h"
#include "protocol/codec.h"
#include "protocol/generated/api_versions.h"
#include "protocol/generated/create_topics.h"
#include "protocol/generated/fetch.h"
#include "protocol/generated/find_coordinator.h"
#include "protocol/generated/list_offsets.h"
#include "protocol/generated/metadata.h"
#include "protocol/generated/produce.h"
#include "protocol/request_header.h"
#include "protocol/response_header.h"

namespace samsa {
namespace {

namespace bl = batch_layout;
using protocol::ApiKey;

// Every offset below this exists; the high watermark of every partition.
constexpr int64_t kEndOffset = int64_t(1) << 50;

struct Options {
  uint16_t port = 9392;
  int default_partitions = 1;
  int record_size = 100;
  int batch_bytes = 64 * 1024;  // size of each prebuilt fetch batch
  int pool_mb = 256;             // fetched batches per record size, taken in turn
  int produce_busy_us = 0;       // CPU spent per produce request before the reply (an experiment knob)
  int max_seconds = 900;
};

struct Route {
  ApiKey key;
  int16_t min;
  int16_t max;
};
// Fetch stops at 12 (topic ids from 13 on); Produce at 9 like librdkafka 2.0.
constexpr Route kRoutes[] = {{ApiKey::kProduce, 3, 9},          {ApiKey::kFetch, 4, 12},
                             {ApiKey::kListOffsets, 1, 6},      {ApiKey::kMetadata, 0, 12},
                             {ApiKey::kFindCoordinator, 0, 3},  {ApiKey::kApiVersions, 0, 3},
                             {ApiKey::kCreateTopics, 2, 5}};

class NullSink final : public FrameSink {
 public:
  explicit NullSink(const Options& options) : options_(options) {}

  void on_frame(InboundFrame frame, ReplyFn reply) override {
    ByteReader r(*frame.frame);
    protocol::RequestHeader h;
    if (!h.decode(r) || !supported(h)) {
      LOG_WARN("null-broker", "closing {}: api {} v{} not served", frame.peer, h.api_key, h.api_version);
      reply(Reply{ReplyKind::kClose, {}});
      return;
    }
    switch (ApiKey(h.api_key)) {
      case ApiKey::kApiVersions: return api_versions(h, reply);
      case ApiKey::kMetadata: return handle<protocol::MetadataRequest>(h, r, reply, &NullSink::metadata);
      case ApiKey::kCreateTopics: return handle<protocol::CreateTopicsRequest>(h, r, reply, &NullSink::create);
      case ApiKey::kFindCoordinator:
        return handle<protocol::FindCoordinatorRequest>(h, r, reply, &NullSink::coordinator);
      case ApiKey::kListOffsets: return handle<protocol::ListOffsetsRequest>(h, r, reply, &NullSink::list_offsets);
      case ApiKey::kProduce: return produce(h, r, reply);
      case ApiKey::kFetch: return handle<protocol::FetchRequest>(h, r, reply, &NullSink::fetch);
      default: reply(Reply{ReplyKind::kClose, {}});
    }
  }

 private:
  static bool supported(const protocol::RequestHeader& h) {
    for (const Route& route : kRoutes) {
      if (int16_t(route.key) == h.api_key) return h.api_version >= route.min && h.api_version <= route.max;
    }
    return false;
  }

  template <typename Response>
  static void respond(const protocol::RequestHeader& h, const Response& response, ReplyFn& reply) {
    OutBuffer out;
    protocol::begin_response(out, h.correlation_id, h.api_key, h.api_version);
    protocol::Encoder w(out);
    response.encode(w, h.api_version);
    protocol::finish_response(out);
    reply(Reply{ReplyKind::kSend, std::move(out)});
  }

  template <typename Request, typename Fn>
  void handle(const protocol::RequestHeader& h, ByteReader& r, ReplyFn& reply, Fn fn) {
    Request request;
    if (!request.decode(r, h.api_version) || !r.ok()) {
      reply(Reply{ReplyKind::kClose, {}});
      return;
    }
    respond(h, (this->*fn)(request, h.api_version), reply);
  }

  void api_versions(const protocol::RequestHeader& h, ReplyFn& reply) {
    protocol::ApiVersionsResponse response;
    for (const Route& route : kRoutes) {
      protocol::ApiVersionsResponse::ApiVersion v;
      v.api_key = int16_t(route.key);
      v.min_version = route.min;
      v.max_version = route.max;
      response.api_keys.push_back(v);
    }
    // Always answered in v0 framing rules (KIP-511); our max is 3.
    int16_t version = std::min<int16_t>(h.api_version, 3);
    OutBuffer out;
    protocol::begin_response_with_header(out, h.correlation_id, 0);
    protocol::Encoder w(out);
    response.encode(w, version);
    protocol::finish_response(out);
    reply(Reply{ReplyKind::kSend, std::move(out)});
  }

  int partitions_of(const std::string& topic) {
    auto [it, inserted] = topics_.try_emplace(topic, options_.default_partitions);
    return it->second;
  }

  protocol::MetadataResponse metadata(const protocol::MetadataRequest& request, int16_t) {
    protocol::MetadataResponse response;
    response.brokers.push_back({0, "127.0.0.1", int32_t(options_.port), std::nullopt});
    response.cluster_id = "samsa-null-broker";
    response.controller_id = 0;
    std::vector<std::string> names;
    if (request.topics) {
      for (const auto& t : *request.topics) {
        if (t.name) names.push_back(*t.name);
      }
    } else {
      for (const auto& [name, n] : topics_) names.push_back(name);
    }
    for (const std::string& name : names) {
      protocol::MetadataResponse::MetadataResponseTopic topic;
      topic.name = name;
      for (int p = 0; p < partitions_of(name); ++p) {
        protocol::MetadataResponse::MetadataResponsePartition part;
        part.partition_index = p;
        part.leader_id = 0;
        part.leader_epoch = 0;
        part.replica_nodes = {0};
        part.isr_nodes = {0};
        topic.partitions.push_back(part);
      }
      response.topics.push_back(std::move(topic));
    }
    return response;
  }

  protocol::CreateTopicsResponse create(const protocol::CreateTopicsRequest& request, int16_t) {
    protocol::CreateTopicsResponse response;
    for (const auto& t : request.topics) {
      protocol::CreateTopicsResponse::CreatableTopicResult result;
      result.name = t.name;
      auto [it, inserted] = topics_.try_emplace(t.name, t.num_partitions > 0 ? t.num_partitions : 1);
      result.error_code = inserted ? 0 : 36;  // TOPIC_ALREADY_EXISTS
      result.num_partitions = it->second;
      result.replication_factor = 1;
      response.topics.push_back(std::move(result));
    }
    return response;
  }

  protocol::FindCoordinatorResponse coordinator(const protocol::FindCoordinatorRequest& request, int16_t) {
    protocol::FindCoordinatorResponse response;
    response.node_id = 0;
    response.host = "127.0.0.1";
    response.port = options_.port;
    for (const std::string& key : request.coordinator_keys) {
      response.coordinators.push_back({key, 0, "127.0.0.1", int32_t(options_.port), 0, std::nullopt});
    }
    return response;
  }

  protocol::ListOffsetsResponse list_offsets(const protocol::ListOffsetsRequest& request, int16_t) {
    protocol::ListOffsetsResponse response;
    for (const auto& t : request.topics) {
      protocol::ListOffsetsResponse::ListOffsetsTopicResponse topic;
      topic.name = t.name;
      for (const auto& p : t.partitions) {
        protocol::ListOffsetsResponse::ListOffsetsPartitionResponse part;
        part.partition_index = p.partition_index;
        part.offset = p.timestamp == -1 ? produced_[{t.name, p.partition_index}] : 0;
        part.timestamp = -1;
        part.leader_epoch = 0;
        topic.partitions.push_back(part);
      }
      response.topics.push_back(std::move(topic));
    }
    return response;
  }

  // Decoded like the broker does (the records stay borrowed from the frame);
  // offsets are counted, nothing else.
  void produce(const protocol::RequestHeader& h, ByteReader& r, ReplyFn& reply) {
    protocol::ProduceRequest request;
    if (!request.decode(r, h.api_version) || !r.ok()) {
      reply(Reply{ReplyKind::kClose, {}});
      return;
    }
    protocol::ProduceResponse response;
    for (const auto& t : request.topic_data) {
      protocol::ProduceResponse::TopicProduceResponse topic;
      topic.name = t.name;
      for (const auto& p : t.partition_data) {
        protocol::ProduceResponse::PartitionProduceResponse part;
        part.index = p.index;
        int64_t& next = produced_[{t.name, p.index}];
        part.base_offset = next;
        part.log_start_offset = 0;
        next += count_records(p.records.bytes());
        topic.partition_responses.push_back(part);
      }
      response.responses.push_back(std::move(topic));
    }
    busy_for_us(options_.produce_busy_us);
    if (request.acks == 0) {
      reply(Reply{ReplyKind::kNoReply, {}});
      return;
    }
    respond(h, response, reply);
  }

  // Keeps the loop busy, as a broker's own work on a request would: to see
  // how a client responds to a broker that spends that long per request.
  static void busy_for_us(int us) {
    if (us <= 0) return;
    auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
    while (std::chrono::steady_clock::now() < until) {
    }
  }

  static int64_t count_records(ByteView bytes) {
    int64_t n = 0;
    size_t at = 0;
    while (at + bl::kHeaderSize <= bytes.size()) {
      int64_t size = int64_t(bl::kLogOverhead) + int32_t(load_be32(bytes.data() + at + bl::kBatchLength));
      n += int64_t(int32_t(load_be32(bytes.data() + at + bl::kLastOffsetDelta))) + 1;
      if (size <= 0) break;
      at += size_t(size);
    }
    return n;
  }

  protocol::FetchResponse fetch(const protocol::FetchRequest& request, int16_t version) {
    protocol::FetchResponse response;
    int64_t budget = request.max_bytes > 0 ? request.max_bytes : INT32_MAX;
    for (const auto& t : request.topics) {
      protocol::FetchResponse::FetchableTopicResponse topic;
      topic.topic = t.topic;
      for (const auto& p : t.partitions) {
        protocol::FetchResponse::PartitionData part;
        part.partition_index = p.partition;
        part.high_watermark = kEndOffset;
        part.last_stable_offset = kEndOffset;
        part.log_start_offset = 0;
        part.aborted_transactions = std::nullopt;
        int64_t max = std::min<int64_t>(p.partition_max_bytes, budget);
        FileRegion region = batches_at(record_size_of(t.topic), p.fetch_offset, max);
        budget -= region.size;
        part.records = RecordSet::file(std::move(region));
        topic.partitions.push_back(std::move(part));
      }
      response.responses.push_back(std::move(topic));
    }
    (void)version;
    return response;
  }

  int record_size_of(const std::string& topic) const {
    size_t at = topic.find("-rs");
    if (at == std::string::npos) return options_.record_size;
    int n = std::atoi(topic.c_str() + at + 3);
    return n > 0 && n <= (1 << 20) ? n : options_.record_size;
  }

  // Copies of one prebuilt batch filling --pool-mb of a memfd (mapped to
  // patch base offsets); fetches take the next run of them in turn
  // (wrapping), so two partitions of one response never share bytes whose
  // base offsets are patched for each, and a page is patched again only
  // 256 MiB of fetches after it was sent.
  struct Pool {
    std::shared_ptr<const File> file;
    uint8_t* batches = nullptr;
    size_t batch_size = 0;
    size_t count = 0;
    size_t next = 0;
    int records_per_batch = 0;
  };

  // Whole batches for `offset`, at most `max_bytes` (but at least one batch,
  // like Kafka), their base offsets patched in place in the pool's pages,
  // which sendfile then sends (see Pool for why the bytes stay put).
  FileRegion batches_at(int record_size, int64_t offset, int64_t max_bytes) {
    Pool& pool = pool_for(record_size);
    size_t count = std::max<size_t>(1, size_t(std::max<int64_t>(max_bytes, 0)) / pool.batch_size);
    count = std::min(count, pool.count);
    if (pool.next + count > pool.count) pool.next = 0;
    uint8_t* first = pool.batches + pool.next * pool.batch_size;
    for (size_t i = 0; i < count; ++i) {
      store_be64(first + i * pool.batch_size, uint64_t(offset + int64_t(i) * pool.records_per_batch));
    }
    FileRegion region{pool.file, int64_t(pool.next * pool.batch_size), int32_t(count * pool.batch_size)};
    pool.next += count;
    return region;
  }

  Pool& pool_for(int record_size) {
    auto [it, inserted] = pools_.try_emplace(record_size);
    if (inserted) fill_pool(record_size, it->second);
    return it->second;
  }

  void fill_pool(int record_size, Pool& pool) {
    Bytes batch = build_batch(record_size, pool.records_per_batch);
    pool.batch_size = batch.size();
    pool.count = std::max<size_t>(kMaxBatchesPerFetch, (size_t(options_.pool_mb) << 20) / batch.size());
    size_t bytes = pool.count * pool.batch_size;
    int fd = ::memfd_create("null-broker-pool", MFD_CLOEXEC);
    ASSERT(fd >= 0 && ::ftruncate(fd, off_t(bytes)) == 0);
    pool.file = std::make_shared<const PosixFile>(fd, "null-broker-pool");
    void* mapped = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ASSERT(mapped != MAP_FAILED);  // never unmapped: the pool lives as long as the process
    pool.batches = static_cast<uint8_t*>(mapped);
    for (size_t i = 0; i < pool.count; ++i) {
      std::memcpy(pool.batches + i * pool.batch_size, batch.data(), batch.size());
    }
  }

  Bytes build_batch(int record_size, int& records_per_batch) const {
    RecordBatchBuilder builder;
    std::string value(size_t(record_size), 'x');
    for (size_t i = 0; i < value.size(); ++i) value[i] = char('A' + (i * 7) % 26);
    int64_t now = SystemClock().wall_ms();  // a tool: the real clock, its own
    int n = std::max(1, options_.batch_bytes / (record_size + 8));
    for (int i = 0; i < n; ++i) {
      builder.add(now, std::nullopt, ByteView(reinterpret_cast<const uint8_t*>(value.data()), value.size()));
    }
    records_per_batch = n;
    Bytes batch;
    Status built = builder.build_to(batch);
    ASSERT(built.ok());
    return batch;
  }

  static constexpr size_t kMaxBatchesPerFetch = 64;

  const Options& options_;
  std::map<std::string, int> topics_;
  std::map<std::pair<std::string, int32_t>, int64_t> produced_;
  std::map<int, Pool> pools_;  // by record size
};

int parse_int(const char* text, const char* name) {
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (*end != '\0' || v < 0) {
    std::fprintf(stderr, "samsa-null-broker: bad %s '%s'\n", name, text);
    std::exit(2);
  }
  return int(v);
}

}  // namespace
}  // namespace samsa

int main(int argc, char** argv) {
  using namespace samsa;
  Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    int v = parse_int(argv[i + 1], argv[i]);
    if (flag == "--port") options.port = uint16_t(v);
    else if (flag == "--partitions") options.default_partitions = std::max(1, v);
    else if (flag == "--record-size") options.record_size = std::max(1, v);
    else if (flag == "--batch-bytes") options.batch_bytes = std::max(1, v);
    else if (flag == "--max-seconds") options.max_seconds = std::max(1, v);
    else if (flag == "--pool-mb") options.pool_mb = std::max(1, v);
    else if (flag == "--produce-busy-us") options.produce_busy_us = v;
    else {
      std::fprintf(stderr,
                   "usage: samsa-null-broker [--port N] [--partitions N] [--record-size BYTES] "
                   "[--batch-bytes BYTES] [--pool-mb MIB] [--produce-busy-us US] [--max-seconds N]\n");
      return 2;
    }
  }
  ignore_sigpipe();  // fetch uses sendfile, which raises SIGPIPE when a consumer hangs up mid-response
  auto runtime_or = PosixRuntime::create(os_random_seed());
  if (!runtime_or.ok()) return 1;
  auto runtime = std::move(runtime_or).value();
  NullSink sink(options);
  FrameServerOptions server_options;
  server_options.host = "127.0.0.1";
  server_options.port = options.port;
  auto server = FrameServer::start(*runtime, server_options, sink);
  if (!server.ok()) {
    std::fprintf(stderr, "samsa-null-broker: %s\n", server.error().to_string().c_str());
    return 1;
  }
  auto signals = SignalWatcher::create(runtime->loop(), {SIGINT, SIGTERM}, [&](int) { runtime->stop(); });
  if (!signals.ok()) return 1;
  runtime->add_timer(int64_t(options.max_seconds) * 1000, [&] { runtime->stop(); });
  std::fprintf(stderr, "samsa-null-broker: NOT A BROKER (acknowledges without storing) on 127.0.0.1:%u\n",
               unsigned((*server)->port()));
  runtime->run();
  (*server)->close_all();
  return 0;
}

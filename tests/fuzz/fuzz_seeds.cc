// fuzz_seeds TARGET DIR: writes seed inputs for one fuzz target into DIR,
// made with our own encoders (every request of every API and version, each
// codec, batches, legacy sets, segments, metadata and offsets records,
// producer-state snapshots, the controller listener's raft requests), so
// that each run starts from inputs that reach deep into the code whatever
// the message definitions are today. run_fuzz.py adds seeds made from Kafka
// captures and the committed corpus. Not a fuzzer itself.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/byte_writer.h"
#include "controller/metadata_codec.h"
#include "controller/raft_fetch_wire.h"
#include "group/offsets_record.h"
#include "model/compression.h"
#include "model/legacy_message_set.h"
#include "model/record_batch_builder.h"
#include "protocol/codec_test_support.h"
#include "protocol/generated/apis.h"
#include "protocol/request_header.h"
#include "raft_request_fuzz.h"
#include "storage/producer_snapshot.h"

namespace samsa::fuzz {
namespace {

namespace fs = std::filesystem;
using protocol::testing::CodecCase;

class SeedWriter {
 public:
  explicit SeedWriter(fs::path dir) : dir_(std::move(dir)) { fs::create_directories(dir_); }
  void write(const std::string& name, ByteView bytes) {
    std::ofstream out(dir_ / name, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    ++count_;
  }
  int count() const { return count_; }

 private:
  fs::path dir_;
  int count_ = 0;
};

Bytes cat(std::initializer_list<ByteView> parts) {
  Bytes out;
  for (ByteView p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

Bytes one(uint8_t b) { return Bytes{b}; }

const CodecCase& codec_case(const char* name) {
  for (const CodecCase& c : protocol::testing::codec_cases()) {
    if (std::string(c.name) == name) return c;
  }
  std::fprintf(stderr, "no codec case %s\n", name);
  std::abort();
}

void request_seeds(SeedWriter& out) {
  for (const CodecCase& c : protocol::testing::codec_cases()) {
    if (!c.is_request) continue;
    for (int16_t v = c.min_version; v <= c.max_version; ++v) {
      for (int seed : {0, 1}) {
        protocol::RequestHeader h;
        h.api_key = c.api_key;
        h.api_version = v;
        h.correlation_id = 7;
        h.client_id = "fuzz";
        OutBuffer frame;
        h.encode(frame);
        Bytes body = c.sample(v, seed);
        out.write(std::string(c.name) + "_v" + std::to_string(v) + "_" + std::to_string(seed),
                  cat({frame.bytes(), body}));
      }
    }
  }
}

Bytes sample_batch(Compression codec, int records, int64_t base_offset = 0) {
  RecordBatchOptions o;
  o.compression = codec;
  o.base_offset = Offset(base_offset);
  RecordBatchBuilder b(o);
  for (int i = 0; i < records; ++i) {
    std::string key = "k" + std::to_string(i), value = "value-" + std::to_string(i);
    RecordHeader header{"h", ByteView(reinterpret_cast<const uint8_t*>(value.data()), 2)};
    b.add(1'000 + i, as_bytes(key), as_bytes(value), std::span<const RecordHeader>(&header, i % 2));
  }
  return std::move(b.build()).value();
}

Bytes legacy_set(int8_t magic, Compression codec) {
  Bytes inner;
  for (int i = 0; i < 3; ++i) {
    std::string value = "legacy-" + std::to_string(i);
    write_legacy_message(inner, magic, magic == 1 && codec != Compression::kNone ? i : 10 + i, 0, 1'000 + i,
                         std::nullopt, as_bytes(value));
  }
  if (codec == Compression::kNone) return inner;
  Bytes packed;
  if (codec == Compression::kLz4 && magic == 0) {
    (void)compress_lz4_legacy_to(inner, packed);
  } else {
    (void)compress_to(codec, inner, packed);
  }
  Bytes out;
  write_legacy_message(out, magic, 12, int8_t(codec), 1'002, std::nullopt, ByteView(packed));
  return out;
}

const Compression kCodecs[] = {Compression::kNone, Compression::kGzip, Compression::kSnappy, Compression::kLz4,
                               Compression::kZstd};

void record_batch_seeds(SeedWriter& out) {
  for (Compression codec : kCodecs) {
    Bytes batch = sample_batch(codec, 3);
    Bytes two = cat({batch, sample_batch(codec, 1)});
    for (uint8_t mode : {0x07, 0x06, 0x03, 0x0f}) {
      out.write(std::string("v2_") + to_string(codec) + "_mode" + std::to_string(mode), cat({one(mode), batch}));
    }
    out.write(std::string("v2x2_") + to_string(codec), cat({one(0x07), two}));
  }
  // pack mode: the records section uncompressed, compressed by the target.
  for (Compression codec : kCodecs) {
    Bytes plain = sample_batch(Compression::kNone, 3);
    store_be16(plain.data() + batch_layout::kAttributes, uint16_t(codec));
    out.write(std::string("pack_") + to_string(codec), cat({one(0x17), plain}));
  }
  for (int8_t magic : {0, 1}) {
    for (Compression codec : {Compression::kNone, Compression::kGzip, Compression::kSnappy, Compression::kLz4}) {
      out.write("legacy_m" + std::to_string(magic) + "_" + to_string(codec),
                cat({one(0x07), legacy_set(magic, codec)}));
    }
    uint8_t pack = uint8_t(0x17 | (magic << 7));
    const Bytes wrapper_offset = {0, 0, 0, 0, 0, 0, 0, 12};
    out.write("legacy_pack_m" + std::to_string(magic),
              cat({one(pack), legacy_set(magic, Compression::kNone), wrapper_offset}));
  }
}

void decompress_seeds(SeedWriter& out) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += "record " + std::to_string(i % 17) + ";";
  for (Compression codec : kCodecs) {
    Bytes packed;
    (void)compress_to(codec, as_bytes(text), packed);
    for (uint8_t bound : {1, 2}) {
      out.write(std::string(to_string(codec)) + "_" + std::to_string(bound), cat({one(uint8_t(codec)), one(bound), packed}));
    }
  }
  Bytes xerial, legacy;
  (void)compress_snappy_xerial_to(as_bytes(text), xerial);
  (void)compress_lz4_legacy_to(as_bytes(text), legacy);
  out.write("snappy_xerial", cat({one(2), one(2), xerial}));
  out.write("lz4_legacy", cat({one(5), one(2), legacy}));
}

void log_recovery_seeds(SeedWriter& out) {
  Bytes segment;
  for (int i = 0; i < 4; ++i) {
    Bytes b = sample_batch(kCodecs[i % 5], 2, 2 * i);
    segment.insert(segment.end(), b.begin(), b.end());
  }
  // mode, recovery point (u16), log start (u8), then the .log bytes.
  out.write("unclean", cat({Bytes{0x00, 0, 0, 0}, segment}));
  out.write("unclean_rp3", cat({Bytes{0x00, 0, 3, 0}, segment}));
  out.write("clean", cat({Bytes{0x01, 0, 8, 0}, segment}));
  Bytes torn(segment.begin(), segment.end() - 7);
  out.write("torn", cat({Bytes{0x00, 0, 0, 0}, torn}));
  // Two segments: second base offset (u16, minus 1) and split position (u16).
  Bytes first = sample_batch(Compression::kNone, 2, 0), second = sample_batch(Compression::kNone, 2, 2);
  Bytes two = {0x04, 0, 0, 0, 0, 1, uint8_t(first.size() >> 8), uint8_t(first.size())};
  out.write("two_segments", cat({two, first, second}));
}

void metadata_record_seeds(SeedWriter& out) {
  Uuid id;
  for (size_t i = 0; i < id.bytes.size(); ++i) id.bytes[i] = uint8_t(i + 1);
  const MetadataRecord records[] = {
      RegisterBrokerRecord{NodeId(1), BrokerEpoch(5), {}, {{"PLAINTEXT", "localhost", 9092, 0}}, std::string("rack-a"), false},
      TopicRecord{"orders", id},
      PartitionRecord{id, PartitionId(2), {NodeId(1), NodeId(2)}, {NodeId(1)}, NodeId(1), LeaderEpoch(3), 4},
      ConfigRecord{ConfigRecord::Resource::kTopic, "orders", "retention.ms", std::string("1000")},
      ConfigRecord{ConfigRecord::Resource::kBroker, "1", "log.retention.ms", std::nullopt},
      RemoveTopicRecord{id},
      PartitionChangeRecord{id, PartitionId(2), std::vector<NodeId>{NodeId(1), NodeId(2)}, NodeId(2),
                            std::nullopt, 1},
      PartitionChangeRecord{id, PartitionId(0), std::vector<NodeId>{NodeId(1)}},
  };
  int i = 0;
  for (const MetadataRecord& r : records) out.write("record_" + std::to_string(i++), encode_metadata_record(r));
}

Bytes versioned(int16_t version, ByteView body) {
  Bytes out;
  ByteWriter w(out);
  w.write_i16(version);
  w.write_bytes(body);
  return out;
}

// u16 key length, key, tombstone byte, value.
Bytes offsets_input(ByteView key, std::optional<ByteView> value) {
  Bytes out;
  ByteWriter w(out);
  w.write_i16(int16_t(key.size()));
  w.write_bytes(key);
  w.write_i8(value ? 0 : 1);
  if (value) w.write_bytes(*value);
  return out;
}

void offsets_record_seeds(SeedWriter& out) {
  struct Kind {
    const char* key;
    int16_t key_version;
    const char* value;
  };
  for (const Kind& k : {Kind{"OffsetCommitKey", 1, "OffsetCommitValue"}, Kind{"GroupMetadataKey", 2, "GroupMetadataValue"}}) {
    Bytes key = versioned(k.key_version, codec_case(k.key).sample(k.key_version, 0));
    out.write(std::string(k.key) + "_tombstone", offsets_input(key, std::nullopt));
    const CodecCase& value = codec_case(k.value);
    for (int16_t v = value.min_version; v <= value.max_version; ++v) {
      Bytes bytes = versioned(v, value.sample(v, 0));
      out.write(std::string(k.value) + "_v" + std::to_string(v), offsets_input(key, ByteView(bytes)));
    }
  }
}

// mode byte (0: the file's CRC as written), snapshot offset (u32), the file.
void producer_snapshot_seeds(SeedWriter& out) {
  ProducerStateTable table;
  for (int i = 0; i < 7; ++i) {  // producer 5: more batches than kept; 6: a newer epoch
    ProducerId id(i < 2 ? 5 : 6);
    ProducerEpoch epoch(i < 5 ? 0 : 1);
    int32_t seq = 3 * i;
    table.apply(ProducerBatch{id, epoch, seq, seq + 2, Offset(10 * i), Offset(10 * i + 2), 1'000 + i});
  }
  ProducerMap producers = table.producers();
  producers[ProducerId(9)] = ProducerEntry{ProducerEpoch(4), {}, 2'000};  // no batches (a Kafka marker)
  const Bytes offset = {0, 0, 0, 100};
  out.write("empty", cat({one(0), offset, encode_producer_snapshot({})}));
  out.write("producers", cat({one(0), offset, encode_producer_snapshot(producers)}));
  out.write("producers_fix_crc", cat({one(1), offset, encode_producer_snapshot(producers)}));
  ProducerMap wrapped;  // a batch whose sequences wrap at INT32_MAX
  wrapped[ProducerId(3)] = ProducerEntry{ProducerEpoch(2), {BatchMetadata{INT32_MAX - 1, 1, Offset(40), Offset(43)}}, 7};
  out.write("wrapped_sequence", cat({one(0), offset, encode_producer_snapshot(wrapped)}));
}

// One seed a version of API `api` (kRaftRequestApis' index), this node's encoding.
template <typename Wire>
void raft_seed(SeedWriter& out, uint8_t api, const std::string& name, const Wire& wire) {
  const RaftRequestApi& range = kRaftRequestApis[api];
  for (int16_t v = range.min_version; v <= range.max_version; ++v) {
    out.write(std::string(range.name) + "_" + name + "_v" + std::to_string(v),
              cat({one(api), one(uint8_t(v - range.min_version)), encode_wire(wire, v)}));
  }
}

raft::Message raft_message(raft::MessageType type, int from, int64_t term) {
  raft::Message m;
  m.type = type;
  m.from = NodeId(from);
  m.to = fuzz_raft_identity().self;
  m.term = raft::Term(term);
  return m;
}

void raft_request_seeds(SeedWriter& out) {
  const std::string& cluster = fuzz_raft_identity().cluster_id;
  raft::Message vote = raft_message(raft::MessageType::kVote, 2, 5);
  vote.log_index = raft::LogIndex(17);
  vote.log_term = raft::Term(4);
  raft_seed(out, 0, "vote", encode_vote_request(vote, cluster));
  vote.pre_vote = true;
  raft_seed(out, 0, "pre_vote", encode_vote_request(vote, cluster));

  raft::Message resign = raft_message(raft::MessageType::kEndQuorum, 3, 6);
  resign.successors = {NodeId(1), NodeId(2)};
  raft_seed(out, 1, "resign", encode_end_quorum_request(resign, cluster));

  raft::Message append = raft_message(raft::MessageType::kAppend, 2, 5);
  append.log_index = raft::LogIndex(9);
  append.log_term = raft::Term(3);
  append.commit = raft::LogIndex(8);
  for (int i = 0; i < 3; ++i) {
    append.entries.push_back(raft::Entry{raft::Term(i == 0 ? 3 : 5), raft::LogIndex(10 + i),
                                         i == 1 ? raft::EntryKind::kLeaderChange : raft::EntryKind::kNormal,
                                         Bytes{uint8_t(i), 1, 2}});
  }
  raft_seed(out, 2, "append", encode_push_request(append, cluster));
  raft::Message full = append;  // as many entries as a message may carry: mutations reach the limit
  full.entries.clear();
  for (size_t i = 0; i < kMaxRaftEntriesPerMessage; ++i) {
    full.entries.push_back(raft::Entry{raft::Term(5), raft::LogIndex(10 + int64_t(i)), raft::EntryKind::kNormal, {}});
  }
  protocol::SamsaRaftPushRequest at_limit = encode_push_request(full, cluster);
  raft_seed(out, 2, "append_full", at_limit);
  at_limit.entries.push_back(at_limit.entries.back());  // one beyond: refused (the sender cuts there)
  raft_seed(out, 2, "append_over_limit", at_limit);
  raft::Message heartbeat = raft_message(raft::MessageType::kHeartbeat, 2, 5);
  heartbeat.commit = raft::LogIndex(12);
  raft_seed(out, 2, "heartbeat", encode_push_request(heartbeat, cluster));
  raft::Message install = raft_message(raft::MessageType::kSnapshot, 2, 5);
  install.snapshot = std::make_shared<raft::Snapshot>(raft::Snapshot{raft::LogIndex(20), raft::Term(4), Bytes{1, 2, 3}});
  raft_seed(out, 2, "snapshot", encode_push_request(install, cluster));

  raft::FetchRequest fetch{NodeId(7), fuzz_raft_identity().self, raft::LogIndex(12), raft::Term(4)};
  raft_seed(out, 3, "fetch", encode_fetch_request(fetch, cluster));
}

}  // namespace
}  // namespace samsa::fuzz

int main(int argc, char** argv) {
  using namespace samsa::fuzz;
  if (argc != 3) {
    std::fprintf(stderr, "usage: fuzz_seeds TARGET DIR\n");
    return 2;
  }
  const std::string target = argv[1];
  SeedWriter out(argv[2]);
  if (target == "request") request_seeds(out);
  else if (target == "record_batch") record_batch_seeds(out);
  else if (target == "decompress") decompress_seeds(out);
  else if (target == "log_recovery") log_recovery_seeds(out);
  else if (target == "metadata_record") metadata_record_seeds(out);
  else if (target == "offsets_record") offsets_record_seeds(out);
  else if (target == "producer_snapshot") producer_snapshot_seeds(out);
  else if (target == "raft_request") raft_request_seeds(out);
  else {
    std::fprintf(stderr, "fuzz_seeds: unknown target %s\n", target.c_str());
    return 2;
  }
  std::printf("fuzz_seeds: %d seeds for %s\n", out.count(), target.c_str());
  return 0;
}

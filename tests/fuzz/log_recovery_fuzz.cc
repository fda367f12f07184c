// Fuzz target: log recovery (storage/log_loader.cc) from arbitrary segment
// bytes, then reading everything back, appending, and reopening.
//
// Input: byte 0 = mode bits, bytes 1-2 the recovery point, byte 3 the log
// start offset, then (bit 2) the second segment's base offset and where the
// bytes split, then (bit 1) the first segment's .index and .timeindex bytes
// (u16 length each), then the .log bytes.
//   bit 0  the log dir had a clean shutdown (trust index files and sizes)
//   bit 1  write index files for the first segment (else none: rebuilt)
//   bit 2  two segments
//   bit 3  keep the CRCs as given (else every complete batch gets a correct
//          CRC, so that mutations reach the checks behind it)
// Properties, beyond memory safety and bounded allocation: opening never
// fails or aborts; and when no index file was given (every segment is then
// scanned, whatever the shutdown), every batch served has what recovery
// verifies (frame: length, magic 2, offsets; CRC-32C) with increasing
// offsets, an append after recovery reads back, and a
// clean reopen and an unclean reopen both find the same log end.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "base/clock.h"
#include "fuzz_support.h"
#include "io/posix_file_system.h"
#include "model/record_batch.h"
#include "model/record_batch_builder.h"
#include "storage/batch_check.h"
#include "storage/log.h"

namespace samsa::fuzz {
namespace {

namespace fs = std::filesystem;
namespace bl = batch_layout;

const TopicPartition kTp{"fuzz", PartitionId(0)};

// One directory per process, in memory when /dev/shm exists (recovery
// fsyncs).
const fs::path& scratch_dir() {
  static const fs::path dir = [] {
    fs::path root = fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    return root / ("samsa-fuzz-log-" + std::to_string(::getpid()));
  }();
  return dir;
}

LogConfig small_config() {
  LogConfig c;
  c.segment_bytes = 1 << 20;
  c.segment_index_bytes = 4096;
  c.index_interval_bytes = 256;
  return c;
}

void write_file(const fs::path& path, ByteView bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  FUZZ_CHECK(out.good());
}

void fix_crcs(Bytes& buf) {
  for (size_t pos = 0; buf.size() - pos >= bl::kHeaderSize;) {
    int32_t len = int32_t(load_be32(buf.data() + pos + bl::kBatchLength));
    if (len < kMinBatchLength || size_t(len) > buf.size() - pos - bl::kLogOverhead) return;
    size_t size = size_t(len) + bl::kLogOverhead;
    if (buf[pos + bl::kMagic] == 2) store_be32(buf.data() + pos + bl::kCrc, compute_batch_crc(ByteView(buf).subspan(pos, size)));
    pos += size;
  }
}

struct Served {
  int64_t base;
  int64_t size;
  bool operator==(const Served&) const = default;
};

Bytes region_bytes(const FileRegion& r) {
  Bytes out(size_t(r.size));
  if (r.size > 0) FUZZ_CHECK(::pread(r.file->native_handle(), out.data(), out.size(), r.position) == ssize_t(out.size()));
  return out;
}

// Reads the log front to back as a consumer would. `strict`: every batch
// must be intact.
std::vector<Served> read_all(Log& log, bool strict) {
  std::vector<Served> served;
  Offset from = log.log_start_offset();
  for (int reads = 0; reads < 10000 && from < log.log_end_offset(); ++reads) {
    auto r = log.read(from, 1 << 20, Offset(INT64_MAX), true);
    FUZZ_CHECK(r.ok());
    if (r->records.size == 0) break;  // a gap up to the log end (empty active segment)
    Bytes bytes = region_bytes(r->records);
    BatchIterator it(bytes);
    bool any = false;
    while (auto ref = it.next()) {
      Offset last = ref->header.base_offset() + ref->header.last_offset_delta();
      if (strict) {  // what recovery verifies: frame (length, magic 2, offsets) and CRC-32C
        FUZZ_CHECK(parse_batch_frame(ref->bytes).ok());
        FUZZ_CHECK(compute_batch_crc(ref->bytes) == ref->header.crc());
        FUZZ_CHECK(served.empty() || ref->header.base_offset().value() > served.back().base);
      }
      served.push_back({ref->header.base_offset().value(), int64_t(ref->bytes.size())});
      if (last >= from) from = last + 1;
      any = true;
    }
    if (strict) FUZZ_CHECK(it.at_end());
    if (!any) break;
  }
  return served;
}

Bytes fresh_batch() {
  RecordBatchBuilder b;
  const uint8_t value[] = {'o', 'k'};
  b.add(1'000, std::nullopt, ByteView(value, sizeof value));
  auto out = b.build();
  FUZZ_CHECK(out.ok());
  return std::move(out).value();
}

std::unique_ptr<Log> open_log(const fs::path& dir, Clock& clock, RecoveryOptions options, bool strict) {
  static PosixFileSystem files;  // stateless
  auto log = Log::open(files, dir, kTp, small_config(), clock, options);
  if (!log.ok()) {
    std::fprintf(stderr, "open failed: %s\n", log.error().to_string().c_str());
    FUZZ_CHECK(!strict);
    return nullptr;
  }
  return std::move(log).value();
}

void check_recovery(FuzzInput in) {
  const uint8_t mode = in.u8();
  const bool clean = mode & 1, with_index = mode & 2, two_segments = mode & 4, keep_crc = mode & 8;
  RecoveryOptions options;
  options.had_clean_shutdown = clean;
  options.recovery_point = Offset(in.u16());
  options.log_start_offset = Offset(in.u8());
  Offset second_base{0};
  size_t split = 0;
  if (two_segments) {
    second_base = Offset(1 + in.u16());
    split = in.u16();
  }
  ByteView index, time_index;
  if (with_index) {
    index = in.bytes(in.u16() % 4097);
    time_index = in.bytes(in.u16() % 4097);
  }
  ByteView log_bytes = in.rest();
  split = std::min(split, log_bytes.size());
  Bytes first(log_bytes.begin(), log_bytes.begin() + (two_segments ? split : log_bytes.size()));
  Bytes second(log_bytes.begin() + first.size(), log_bytes.end());
  if (!keep_crc) {
    fix_crcs(first);
    fix_crcs(second);
  }

  const fs::path root = scratch_dir();
  std::error_code ec;
  fs::remove_all(root, ec);
  const fs::path dir = root / kTp.to_string();
  fs::create_directories(dir);
  write_file(Segment::log_path(dir, Offset(0)), first);
  if (with_index) {
    write_file(Segment::index_path(dir, Offset(0)), index);
    write_file(Segment::time_index_path(dir, Offset(0)), time_index);
  }
  if (two_segments) write_file(Segment::log_path(dir, second_base), second);

  const bool strict = !with_index;
  ManualClock clock(1'700'000'000'000);
  Offset end;
  {
    auto log = open_log(dir, clock, options, strict);
    if (!log) return;
    read_all(*log, strict);
    Bytes batch = fresh_batch();
    auto appended = log->append(batch.data(), batch.size(), LeaderEpoch(1));
    if (!appended.ok()) {
      std::fprintf(stderr, "append failed: %s\n", appended.error().to_string().c_str());
      FUZZ_CHECK(!strict);
      return;
    }
    auto back = log->read(appended->first_offset, 1 << 20, Offset(INT64_MAX), true);
    FUZZ_CHECK(back.ok() && back->records.size > 0);
    Bytes got = region_bytes(back->records);
    BatchIterator it(got);
    auto ref = it.next();
    FUZZ_CHECK(ref && ref->header.base_offset() == appended->first_offset && check_batch(ref->bytes).ok());
    end = log->log_end_offset();
    const std::vector<Served> served = read_all(*log, strict);
    FUZZ_CHECK(log->close().ok());

    auto reopened = open_log(dir, clock, RecoveryOptions{true, end, options.log_start_offset}, strict);
    if (!reopened) return;
    FUZZ_CHECK(!strict || reopened->log_end_offset() == end);
    FUZZ_CHECK(!strict || read_all(*reopened, strict) == served);
  }
  // Unclean (no close): everything is scanned again.
  auto again = open_log(dir, clock, RecoveryOptions{false, Offset(0), options.log_start_offset}, strict);
  if (!again) return;
  FUZZ_CHECK(!strict || again->log_end_offset() == end);
  (void)read_all(*again, strict);
}

}  // namespace
}  // namespace samsa::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  samsa::fuzz::quiet_logs();
  std::atexit([] {
    std::error_code ec;
    std::filesystem::remove_all(samsa::fuzz::scratch_dir(), ec);
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  samsa::fuzz::check_recovery(samsa::fuzz::FuzzInput(data, size));
  return 0;
}

// samsa-storage-bench: is the partition log O(1) at any size?
//
// For a small log (default 100 MB) and a large one (default 20 GB, or a
// third of the free space when less), built in the same way (16 KiB
// batches of 16 records, default segment.bytes 1 GiB), it measures:
//   - append throughput of 16 MB appended to each log (after an fsync, so
//     both start without dirty pages),
//   - fetch latency at the head (the newest 64 KiB) and at random old
//     offsets: the offset lookup alone (Log::read returns a file region
//     after the index search and a short header scan) and lookup + reading
//     the bytes (pread of the region, the work sendfile does),
//   - startup after a clean shutdown (must read no segment data),
//   - startup after a simulated kill -9 with a fixed unflushed tail (must
//     scan only that tail),
// and prints each figure for both logs and the large/small ratio, which
// should be close to 1. Figures are medians of alternating rounds (small,
// large, small, ...) so that load from other processes hits both alike. Random old reads of a log larger than RAM come
// from the disk, not the page cache: that ratio measures the device; the
// lookup ratio is the algorithmic one.

#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/log.h"
#include "model/record_batch_builder.h"
#include "io/posix_file_system.h"
#include "storage/log.h"

namespace samsa {
namespace {

namespace fs = std::filesystem;
using Clock_ = std::chrono::steady_clock;

double seconds_since(Clock_::time_point t) { return std::chrono::duration<double>(Clock_::now() - t).count(); }

struct Options {
  int64_t small_mb = 100;
  int64_t large_mb = 20480;
  int64_t tail_mb = 64;
  int reads = 2000;
  int rounds = 5;
  fs::path dir = fs::temp_directory_path() / "samsa-storage-bench";
  bool keep = false;
};

struct Figures {
  int64_t bytes = 0;
  int64_t segments = 0;
  double append_mb_s = 0;
  double head_lookup_us = 0, head_read_us = 0;
  double old_lookup_us = 0, old_read_us = 0;
  double warm_lookup_us = 0, warm_read_us = 0;
  double clean_open_ms = 0;
  int64_t clean_open_scanned = 0;
  double crash_open_ms = 0;
  int64_t crash_open_scanned = 0;
};

Bytes make_batch() {
  RecordBatchBuilder b;
  std::string value(1000, 'v');
  for (int i = 0; i < 16; ++i) {
    std::string key = "key-" + std::to_string(i);
    b.add(1'700'000'000'000 + i, ByteView(reinterpret_cast<const uint8_t*>(key.data()), key.size()),
          ByteView(reinterpret_cast<const uint8_t*>(value.data()), value.size()));
  }
  return b.build().value();
}

std::unique_ptr<Log> open_log(const fs::path& dir, SystemClock& clock, RecoveryOptions o) {
  static PosixFileSystem files;  // stateless
  auto log = Log::open(files, dir, TopicPartition{"bench", PartitionId(0)}, LogConfig{}, clock, o);
  if (!log.ok()) {
    std::fprintf(stderr, "open %s: %s\n", dir.c_str(), log.error().to_string().c_str());
    std::exit(1);
  }
  return std::move(log).value();
}

// Appends until the log holds `target` bytes; returns MB/s over the last
// `measure` bytes.
double fill(Log& log, int64_t target, int64_t measure) {
  Bytes batch = make_batch();
  Clock_::time_point start{};
  int64_t measured_from = std::max<int64_t>(0, target - measure);
  bool timing = false;
  int64_t size = log.size_bytes();
  while (size < target) {
    if (!timing && size >= measured_from) {
      // Same starting point for both logs: no dirty pages left from
      // building, so the window measures appends, not earlier writeback.
      if (!log.flush().ok()) std::exit(1);
      ::sync();
      timing = true;
      start = Clock_::now();
      measured_from = size;
    }
    auto r = log.append(batch.data(), batch.size(), LeaderEpoch(0));
    if (!r.ok()) {
      std::fprintf(stderr, "append: %s\n", r.error().to_string().c_str());
      std::exit(1);
    }
    size += int64_t(batch.size());
  }
  return double(size - measured_from) / 1e6 / seconds_since(start);
}

// Mean microseconds of Log::read at `offsets` (lookup) and of read + pread
// of the bytes (read).
std::pair<double, double> fetch_latency(Log& log, const std::vector<Offset>& offsets) {
  Bytes buf(64 * 1024 + 32 * 1024);
  double lookup = 0, total = 0;
  for (Offset o : offsets) {
    auto t0 = Clock_::now();
    auto r = log.read(o, 64 * 1024, log.log_end_offset(), true);
    double l = seconds_since(t0);
    if (!r.ok()) {
      std::fprintf(stderr, "read: %s\n", r.error().to_string().c_str());
      std::exit(1);
    }
    size_t n = std::min(buf.size(), size_t(r->records.size));
    if (n > 0 && ::pread(r->records.file->native_handle(), buf.data(), n, r->records.position) < 0) std::exit(1);
    total += seconds_since(t0);
    lookup += l;
  }
  return {lookup / double(offsets.size()) * 1e6, total / double(offsets.size()) * 1e6};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The machine is shared and noisy: every figure is measured in alternating
// rounds on the two logs (small, large, small, large, ...) and the median
// round is reported, so that load changes hit both sides alike.
struct Bench {
  fs::path dir;
  int64_t bytes;
  std::unique_ptr<Log> log;
  std::vector<double> append, head_lookup, head_read, old_lookup, old_read, warm_lookup, warm_read, clean_open;
  Figures f;
};

void build(Bench& b, SystemClock& clock) {
  fs::remove_all(b.dir);
  b.log = open_log(b.dir, clock, {});
  std::printf("  building %lld MB in %s ...\n", (long long)(b.bytes >> 20), b.dir.c_str());
  std::fflush(stdout);
  fill(*b.log, b.bytes, 0);
  if (!b.log->flush().ok()) std::exit(1);
}

void measure_round(Bench& b, SystemClock& clock, const Options& opt, uint64_t seed) {
  // Append: 16 MB after an fsync (no dirty pages left over).
  b.append.push_back(fill(*b.log, b.log->size_bytes() + (16 << 20), 16 << 20));
  std::mt19937_64 rng(seed);
  Offset end = b.log->log_end_offset();
  std::vector<Offset> head, old;
  for (int i = 0; i < opt.reads; ++i) {
    head.push_back(end - int64_t(1 + rng() % 64));  // within the newest ~64 KiB
    old.push_back(Offset(int64_t(rng() % uint64_t(end.value() * 9 / 10))));
  }
  auto [hl, hr] = fetch_latency(*b.log, head);
  auto [ol, orr] = fetch_latency(*b.log, old);
  // The same offsets again: their index and data pages are now cached, so
  // this pass measures the lookup work itself. The first pass also pays the
  // page-cache misses, which only a log larger than memory has.
  auto [wl, wr] = fetch_latency(*b.log, old);
  b.warm_lookup.push_back(wl);
  b.warm_read.push_back(wr);
  b.head_lookup.push_back(hl);
  b.head_read.push_back(hr);
  b.old_lookup.push_back(ol);
  b.old_read.push_back(orr);
  // Clean shutdown and open.
  if (!b.log->close().ok()) std::exit(1);
  b.log.reset();
  auto t0 = Clock_::now();
  b.log = open_log(b.dir, clock, RecoveryOptions{.had_clean_shutdown = true, .recovery_point = Offset(0)});
  b.clean_open.push_back(seconds_since(t0) * 1e3);
  b.f.clean_open_scanned = std::max(b.f.clean_open_scanned, b.log->load_stats().bytes_scanned);
}

// kill -9: a fixed unflushed tail, then the Log is dropped unclosed.
void measure_crash(Bench& b, SystemClock& clock, const Options& opt) {
  if (!b.log->flush().ok()) std::exit(1);
  Offset recovery_point = b.log->recovery_point();
  fill(*b.log, b.log->size_bytes() + (opt.tail_mb << 20), 0);
  b.log.reset();
  auto t0 = Clock_::now();
  b.log = open_log(b.dir, clock, RecoveryOptions{.had_clean_shutdown = false, .recovery_point = recovery_point});
  b.f.crash_open_ms = seconds_since(t0) * 1e3;
  b.f.crash_open_scanned = b.log->load_stats().bytes_scanned;
}

void finish(Bench& b, const Options& opt) {
  b.f.bytes = b.log->size_bytes();
  b.f.segments = int64_t(b.log->segment_count());
  b.f.append_mb_s = median(b.append);
  b.f.head_lookup_us = median(b.head_lookup);
  b.f.head_read_us = median(b.head_read);
  b.f.old_lookup_us = median(b.old_lookup);
  b.f.old_read_us = median(b.old_read);
  b.f.warm_lookup_us = median(b.warm_lookup);
  b.f.warm_read_us = median(b.warm_read);
  b.f.clean_open_ms = median(b.clean_open);
  if (!b.log->close().ok()) std::exit(1);
  b.log.reset();
  if (!opt.keep) fs::remove_all(b.dir);
}

void usage() {
  std::puts(
      "Usage: samsa-storage-bench [--small-mb N] [--large-mb N] [--tail-mb N] [--reads N] [--rounds N] [--dir PATH]\n"
      "                           [--keep]\n"
      "Builds a small and a large partition log and prints append throughput, fetch latency (head and\n"
      "random old offsets), and startup time after a clean and an unclean stop, with large/small ratios\n"
      "(median of --rounds alternating rounds, default 5).\n"
      "Defaults: 100 MB and 20480 MB (capped at a third of the free space of --dir), 64 MB unflushed tail.");
}

}  // namespace
}  // namespace samsa

int main(int argc, char** argv) {
  using namespace samsa;
  Options opt;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        usage();
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--small-mb") opt.small_mb = std::atoll(next());
    else if (a == "--large-mb") opt.large_mb = std::atoll(next());
    else if (a == "--tail-mb") opt.tail_mb = std::atoll(next());
    else if (a == "--reads") opt.reads = std::atoi(next());
    else if (a == "--rounds") opt.rounds = std::max(1, std::atoi(next()));
    else if (a == "--dir") opt.dir = next();
    else if (a == "--keep") opt.keep = true;
    else {
      usage();
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  set_log_level(LogLevel::kWarn);
  fs::create_directories(opt.dir);
  struct statvfs vfs;
  if (::statvfs(opt.dir.c_str(), &vfs) == 0) {
    int64_t free_mb = int64_t(vfs.f_bavail) * int64_t(vfs.f_frsize) >> 20;
    if (opt.large_mb > free_mb / 3) {
      std::printf("large log capped at %lld MB (a third of %lld MB free)\n", (long long)(free_mb / 3),
                  (long long)free_mb);
      opt.large_mb = free_mb / 3;
    }
  }
  std::printf("samsa-storage-bench: small %lld MB, large %lld MB, unflushed tail %lld MB, %d reads\n",
              (long long)opt.small_mb, (long long)opt.large_mb, (long long)opt.tail_mb, opt.reads);
  SystemClock clock;
  Bench small{opt.dir / "small-0", opt.small_mb << 20};
  Bench large{opt.dir / "large-0", opt.large_mb << 20};
  build(small, clock);
  build(large, clock);
  for (int round = 0; round < opt.rounds; ++round) {
    measure_round(small, clock, opt, 42 + round);
    measure_round(large, clock, opt, 42 + round);
  }
  measure_crash(small, clock, opt);
  measure_crash(large, clock, opt);
  finish(small, opt);
  finish(large, opt);
  const Figures& s = small.f;
  const Figures& l = large.f;
  auto row = [](const char* name, double a, double b, const char* unit) {
    std::printf("%-34s %12.2f %12.2f %-6s %8.2f\n", name, a, b, unit, a > 0 ? b / a : 0.0);
  };
  std::printf("\n%-34s %12s %12s %-6s %8s\n", "", "small", "large", "", "large/small");
  std::printf("%-34s %12lld %12lld %-6s\n", "log size", (long long)(s.bytes >> 20), (long long)(l.bytes >> 20), "MB");
  std::printf("%-34s %12lld %12lld\n", "segments", (long long)s.segments, (long long)l.segments);
  row("append throughput", s.append_mb_s, l.append_mb_s, "MB/s");
  row("fetch at head: lookup", s.head_lookup_us, l.head_lookup_us, "us");
  row("fetch at head: lookup + read 64K", s.head_read_us, l.head_read_us, "us");
  row("fetch random old: lookup", s.old_lookup_us, l.old_lookup_us, "us");
  row("fetch random old: lookup + read", s.old_read_us, l.old_read_us, "us");
  row("  same offsets again (cached): lookup", s.warm_lookup_us, l.warm_lookup_us, "us");
  row("  same offsets again: lookup + read", s.warm_read_us, l.warm_read_us, "us");
  row("startup after clean shutdown", s.clean_open_ms, l.clean_open_ms, "ms");
  std::printf("%-34s %12lld %12lld %-6s\n", "  segment bytes read at startup", (long long)s.clean_open_scanned,
              (long long)l.clean_open_scanned, "B");
  row("startup after kill -9 (same tail)", s.crash_open_ms, l.crash_open_ms, "ms");
  std::printf("%-34s %12lld %12lld %-6s\n", "  segment bytes scanned", (long long)s.crash_open_scanned,
              (long long)l.crash_open_scanned, "B");
  return 0;
}

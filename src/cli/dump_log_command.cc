// `samsa dump-log FILE...`: prints the contents of partition log files the
// way Kafka's kafka-dump-log does — batches of a `.log` (and with
// --deep-iteration / --print-data-log each record), the entries of a
// `.index` / `.timeindex` (with --index-sanity-check, their consistency
// against the `.log`), and checkpoint files as text. Reads files through
// pread, one batch at a time, so a segment of any size is fine, and never
// trusts a length before checking it against the file. Bytes that are not
// a whole valid batch end the dump with the count of invalid bytes, like
// Kafka. Every batch's records are checked too (the broker's deep check,
// with the gaps compaction leaves allowed): a batch whose CRC is right but
// whose records are broken is reported and the dump goes on. Any of these
// makes the exit status 1. Formats: docs/formats/log-segments.md.

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "cli/arg_parser.h"
#include "cli/commands.h"
#include "model/record.h"
#include "model/record_batch.h"
#include "model/record_batch_header.h"

namespace samsa::cli {
namespace {

namespace fs = std::filesystem;
namespace bl = batch_layout;

struct DumpOptions {
  bool deep = false;
  bool print_data = false;
  bool index_sanity = false;
  int64_t max_batch_bytes = 64 << 20;
};

bool pread_exact(int fd, uint8_t* out, size_t n, int64_t at) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::pread(fd, out + done, n - done, off_t(at + int64_t(done)));
    if (r <= 0) return false;
    done += size_t(r);
  }
  return true;
}

std::string printable(ByteView b) {
  std::string s;
  for (uint8_t c : b) {
    if (c >= 0x20 && c < 0x7f) {
      s.push_back(char(c));
    } else {
      s += fmt::format("\\x{:02x}", c);
    }
  }
  return s;
}

// Base offset from a segment file name ("00000000000000000042.log").
int64_t base_of(const fs::path& p) {
  std::string stem = p.stem().string();
  if (stem.size() != 20) return 0;
  int64_t v = 0;
  for (char c : stem) {
    if (c < '0' || c > '9') return 0;
    v = v * 10 + (c - '0');
  }
  return v;
}

void print_records(ByteView batch, const DumpOptions& o) {
  RecordBatchHeader h(batch.data());
  auto it = RecordIterator::open(batch);
  if (!it.ok()) {
    std::printf("| records unreadable: %s\n", it.error().to_string().c_str());
    return;
  }
  Record r;
  int32_t seq_base = h.base_sequence();
  while (it->next(r)) {
    int64_t offset = (h.base_offset() + r.offset_delta).value();
    std::string line = fmt::format("| offset: {} {}: {} keySize: {} valueSize: {} sequence: {} headerKeys: [", offset,
                                   h.log_append_time() ? "LogAppendTime" : "CreateTime",
                                   h.log_append_time() ? h.max_timestamp() : r.timestamp(h),
                                   r.key ? int64_t(r.key->size()) : -1, r.value ? int64_t(r.value->size()) : -1,
                                   seq_base < 0 ? -1 : seq_base + r.offset_delta);
    RecordHeader rh;
    bool first = true;
    for (auto hi = r.headers(); hi.next(rh); first = false) line += (first ? "" : ",") + std::string(rh.key);
    line += "]";
    if (o.print_data) {
      if (r.key) line += " key: " + printable(*r.key);
      line += " payload: " + (r.value ? printable(*r.value) : std::string("null"));
    }
    std::printf("%s\n", line.c_str());
  }
  if (!it->status().ok()) std::printf("| records malformed: %s\n", it->status().error().to_string().c_str());
}

// The records of a whole, CRC-valid batch, checked as the broker checks a
// stored batch; nullopt when they are sound.
std::optional<std::string> malformed_records(ByteView batch) {
  ValidateOptions check{.deep = true, .from_client = false};
  std::string why;
  BatchFault fault = validate_batch(batch, check, &why);
  if (fault == BatchFault::kNone) return std::nullopt;
  return std::string(to_string(fault)) + ": " + why;
}

int dump_log_file(const fs::path& path, int fd, int64_t size, const DumpOptions& o) {
  std::printf("Starting offset: %lld\n", (long long)base_of(path));
  int64_t pos = 0;
  int64_t malformed_batches = 0;
  Bytes batch;
  std::string problem;
  while (pos < size) {
    uint8_t hb[bl::kHeaderSize];
    if (size - pos < int64_t(sizeof hb) || !pread_exact(fd, hb, sizeof hb, pos)) {
      problem = "partial batch header";
      break;
    }
    RecordBatchHeader h(hb);
    int64_t total = h.total_size();
    if (h.batch_length() < kMinBatchLength || total > size - pos || total > o.max_batch_bytes) {
      problem = fmt::format("batch length {} does not fit", h.batch_length());
      break;
    }
    if (h.magic() != 2) {
      problem = fmt::format("magic {} is not 2", h.magic());
      break;
    }
    batch.resize(size_t(total));
    if (!pread_exact(fd, batch.data(), batch.size(), pos)) {
      problem = "short read";
      break;
    }
    bool valid = compute_batch_crc(batch) == h.crc();
    int32_t last_seq = h.base_sequence() < 0 ? -1 : h.base_sequence() + h.last_offset_delta();
    bool horizon = h.attributes() & batch_attr::kDeleteHorizon;
    std::printf(
        "baseOffset: %lld lastOffset: %lld count: %d baseSequence: %d lastSequence: %d producerId: %lld "
        "producerEpoch: %d partitionLeaderEpoch: %d isTransactional: %s isControl: %s deleteHorizonMs: %s "
        "position: %lld %s: %lld size: %lld magic: 2 compresscodec: %s crc: %u isvalid: %s\n",
        (long long)h.base_offset().value(), (long long)h.last_offset().value(), h.records_count(), h.base_sequence(),
        last_seq, (long long)h.producer_id().value(), h.producer_epoch().value(), h.partition_leader_epoch().value(),
        h.is_transactional() ? "true" : "false", h.is_control() ? "true" : "false",
        horizon ? std::to_string(h.base_timestamp()).c_str() : "OptionalLong.empty", (long long)pos,
        h.log_append_time() ? "LogAppendTime" : "CreateTime", (long long)h.max_timestamp(), (long long)total,
        to_string(h.compression()), h.crc(), valid ? "true" : "false");
    if (!valid) {
      problem = "CRC mismatch";
      break;
    }
    if (auto why = malformed_records(batch)) {
      std::printf("| malformed batch at position %lld: %s\n", (long long)pos, why->c_str());
      ++malformed_batches;
    }
    if (o.deep || o.print_data) print_records(batch, o);
    pos += total;
  }
  if (malformed_batches > 0) {
    std::printf("Found %lld malformed batches in %s\n", (long long)malformed_batches, path.filename().c_str());
  }
  if (pos < size) {
    std::printf("Found %lld invalid bytes at the end of %s (%s)\n", (long long)(size - pos),
                path.filename().c_str(), problem.c_str());
    return 1;
  }
  return malformed_batches > 0 ? 1 : 0;
}

// The position of the batch whose last offset is `offset`, checked against
// the .log next to the index (for --index-sanity-check).
std::optional<std::string> check_index_entry(int log_fd, int64_t log_size, int64_t offset, int64_t position) {
  uint8_t hb[bl::kHeaderSize];
  if (position + int64_t(sizeof hb) > log_size || !pread_exact(log_fd, hb, sizeof hb, position)) {
    return std::string("position beyond the log");
  }
  RecordBatchHeader h(hb);
  if (h.last_offset().value() != offset) {
    return fmt::format("batch at {} ends at offset {}, not {}", position, h.last_offset().value(), offset);
  }
  return std::nullopt;
}

int dump_index_file(const fs::path& path, int fd, int64_t size, bool time_index, const DumpOptions& o) {
  const int64_t entry = time_index ? 12 : 8;
  int64_t base = base_of(path);
  fs::path log_path = path;
  log_path.replace_extension(".log");
  int log_fd = o.index_sanity ? ::open(log_path.c_str(), O_RDONLY | O_CLOEXEC) : -1;
  int64_t log_size = 0;
  if (log_fd >= 0) log_size = ::lseek(log_fd, 0, SEEK_END);
  int problems = 0;
  int64_t prev_offset = -1, prev_key = INT64_MIN;
  for (int64_t at = 0; at + entry <= size; at += entry) {
    uint8_t e[12];
    if (!pread_exact(fd, e, size_t(entry), at)) break;
    int64_t offset, key;
    if (time_index) {
      key = int64_t(load_be64(e));
      offset = base + int32_t(load_be32(e + 8));
      if (key == 0 && offset == base && at > 0) break;  // preallocated zeros
      std::printf("timestamp: %lld offset: %lld\n", (long long)key, (long long)offset);
    } else {
      offset = base + int32_t(load_be32(e));
      key = int32_t(load_be32(e + 4));
      if (key == 0 && offset == base && at > 0) break;  // preallocated zeros
      std::printf("offset: %lld position: %lld\n", (long long)offset, (long long)key);
      if (log_fd >= 0) {
        if (auto bad = check_index_entry(log_fd, log_size, offset, key)) {
          std::printf("  mismatch: %s\n", bad->c_str());
          ++problems;
        }
      }
    }
    if (offset < prev_offset || key <= prev_key) {
      std::printf("  out of order after offset %lld\n", (long long)prev_offset);
      ++problems;
    }
    prev_offset = offset;
    prev_key = key;
  }
  if (size % entry != 0) {
    std::printf("Index size %lld is not a multiple of %lld\n", (long long)size, (long long)entry);
    ++problems;
  }
  if (log_fd >= 0) ::close(log_fd);
  if (o.index_sanity) std::printf("%s: %s\n", path.filename().c_str(), problems == 0 ? "index is sane" : "index is CORRUPT");
  return problems == 0 ? 0 : 1;
}

int dump_text_file(int fd, int64_t size) {
  if (size > (1 << 20)) {
    std::printf("(%lld bytes, not shown)\n", (long long)size);
    return 0;
  }
  std::string text(size_t(size), '\0');
  if (!pread_exact(fd, reinterpret_cast<uint8_t*>(text.data()), text.size(), 0)) return 1;
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

int dump_file(const fs::path& path, const DumpOptions& o) {
  std::printf("Dumping %s\n", path.c_str());
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    std::fprintf(stderr, "samsa dump-log: cannot open %s: %s\n", path.c_str(), std::strerror(errno));
    return 1;
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  int64_t size = ::lseek(fd, 0, SEEK_END);
  std::string ext = path.extension().string();
  if (ext == ".log") return dump_log_file(path, fd, size, o);
  if (ext == ".index") return dump_index_file(path, fd, size, false, o);
  if (ext == ".timeindex") return dump_index_file(path, fd, size, true, o);
  return dump_text_file(fd, size);  // checkpoints, meta.properties
}

}  // namespace

int run_dump_log(int argc, char** argv) {
  DumpOptions o;
  std::vector<std::string> files;
  std::vector<char*> flags{argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') {
      flags.push_back(argv[i]);
    } else {
      files.emplace_back(argv[i]);
    }
  }
  std::vector<std::string> file_opts;
  ArgParser parser("samsa dump-log", "Print the batches, records and index entries of log segment files.");
  parser.add_flag("deep-iteration", 0, "Print every record of every batch", &o.deep);
  parser.add_flag("print-data-log", 0, "Print record keys and values (implies --deep-iteration)", &o.print_data);
  parser.add_flag("index-sanity-check", 0, "Check index entries against the .log next to them", &o.index_sanity);
  parser.add_list("files", 0, "FILE", "A file to dump (or give files as arguments); repeatable", &file_opts);
  parser.set_epilog(
      "Files: <base>.log, <base>.index, <base>.timeindex; other files (checkpoints) are printed as text.\n"
      "Exit status 1 if a file has invalid bytes, a batch with malformed records, or an inconsistent index.\n"
      "Example: samsa dump-log --print-data-log /var/samsa/orders-0/00000000000000000000.log");
  auto outcome = parser.parse(int(flags.size()), flags.data());
  if (outcome != ParseOutcome::kOk) return outcome == ParseOutcome::kHelp ? 0 : kUsageExitCode;
  files.insert(files.end(), file_opts.begin(), file_opts.end());
  if (files.empty()) {
    std::fprintf(stderr, "samsa dump-log: no files given (see --help)\n");
    return kUsageExitCode;
  }
  int status = 0;
  for (const auto& f : files) status = std::max(status, dump_file(f, o));
  std::fflush(stdout);
  return status;
}

}  // namespace samsa::cli

// The `samsa` executable: dispatches to a subcommand through one table, so a
// new subcommand (group, dump-log, bench, ...) is one row here plus its
// run_* function.

#include <malloc.h>

#include <cstdio>
#include <string_view>

#include "cli/commands.h"

#include "broker/broker.h"
#include "server/run_server.h"
#include "server/storage_command.h"

namespace {

// ~1 MB buffers that live for one request each: the broker's request frames
// and decompression buffers, a benchmark client's (librdkafka's) produce
// request buffers. With glibc's adaptive defaults the heap top is trimmed and
// regrown around them (brk shrink + page faults + zeroing fresh pages on
// every request: ~5% of broker CPU producing compressed 1 KB records, and
// twice the page faults in a load generator whose broker acknowledges later;
// see bench/ANALYSIS.md). Fixed thresholds keep up to 16 MiB of freed memory
// for reuse; larger buffers (rare) still come from mmap.
void keep_freed_memory_for_reuse() {
  mallopt(M_MMAP_THRESHOLD, 16 << 20);
  mallopt(M_TRIM_THRESHOLD, 16 << 20);
}

// run_server gets the arguments after `samsa`, like every subcommand:
// argv[0] == "server".
int server_command(int argc, char** argv) {
  keep_freed_memory_for_reuse();
  samsa::set_service_factory([] { return std::make_unique<samsa::Broker>(); });
  return samsa::run_server(argc, argv);
}

int bench_command(int argc, char** argv) {
  keep_freed_memory_for_reuse();
  return samsa::cli::run_bench(argc, argv);
}

struct Subcommand {
  const char* name;
  const char* summary;
  int (*run)(int argc, char** argv);
};

constexpr Subcommand kSubcommands[] = {
    {"server", "Run a broker", server_command},
    {"storage", "Format log dirs (meta.properties) and make cluster ids, as kafka-storage.sh", samsa::run_storage},
    {"topic", "Create, list, describe and delete topics", samsa::cli::run_topic},
    {"produce", "Produce lines from stdin to a topic", samsa::cli::run_produce},
    {"consume", "Print the records of a topic to stdout", samsa::cli::run_consume},
    {"bench", "Benchmark produce, consume and end-to-end latency", bench_command},
    {"group", "List, describe, delete consumer groups; reset their offsets", samsa::cli::run_group},
    {"dump-log", "Print the batches, records and index entries of log files", samsa::cli::run_dump_log},
    {"cluster", "Describe the brokers, the controller and the metadata quorum", samsa::cli::run_cluster},
    {"election", "Elect preferred (or unclean) partition leaders, as kafka-leader-election.sh",
     samsa::cli::run_election},
    {"dev", "Development helpers: run a local cluster of N nodes", samsa::cli::run_dev},
};

void print_usage(FILE* out) {
  std::fputs(
      "Usage: samsa <command> [options]\n\n"
      "Samsa: a Kafka-compatible broker and its tools.\n\nCommands:\n",
      out);
  for (const Subcommand& c : kSubcommands) std::fprintf(out, "  %-10s %s\n", c.name, c.summary);
  std::fputs("\nRun 'samsa <command> --help' for the options of a command.\n", out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_usage(stderr);
    return 2;
  }
  std::string_view name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    print_usage(stdout);
    return 0;
  }
  for (const Subcommand& c : kSubcommands) {
    if (name == c.name) return c.run(argc - 1, argv + 1);
  }
  std::fprintf(stderr, "samsa: unknown command '%s'\n\n", argv[1]);
  print_usage(stderr);
  return 2;
}

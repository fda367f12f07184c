#pragma once
// The modes of `samsa bench` (see bench_command.cc) and their common
// options. Internal to the cli library.

#include <cstdint>
#include <string>

#include "base/result.h"
#include "cli/arg_parser.h"
#include "cli/kafka_client.h"

namespace samsa::cli::bench {

struct CommonArgs {
  ClientOptions client;
  std::string topic = "samsa-bench";
  int64_t partitions = 1;
  int64_t record_size = 100;
  int64_t records = 1'000'000;
  std::string duration_text;
  std::string progress_text = "5";
  bool json = false;
  // Filled by finish().
  double duration_s = 0;  // 0 = run by record count
  double progress_s = 5;

  void add_to(ArgParser& parser);
  // Checks and converts the text options after parsing.
  Status finish();
};

int consume_main(int argc, char** argv);
int e2e_main(int argc, char** argv);

}  // namespace samsa::cli::bench

#include "cli/action_table.h"

#include <cstdio>
#include <algorithm>
#include <cstring>
#include <string_view>

#include "cli/arg_parser.h"

namespace samsa::cli {
namespace {

void print_usage(const ActionCommand& command, FILE* out) {
  std::fprintf(out, "Usage: samsa %s <action> %s[options]\n\n", command.name, command.operands);
  if (command.description) std::fprintf(out, "%s\n\n", command.description);
  int width = 0;
  for (const Action& a : command.actions) width = std::max(width, int(std::strlen(a.name)));
  std::fputs("Actions:\n", out);
  for (const Action& a : command.actions) std::fprintf(out, "  %-*s  %s\n", width, a.name, a.summary);
  std::fprintf(out, "\nRun 'samsa %s <action> --help' for the options of an action.\n", command.name);
}

}  // namespace

int run_action_command(const ActionCommand& command, int argc, char** argv) {
  if (argc < 2) {
    print_usage(command, stderr);
    return kUsageExitCode;
  }
  std::string_view action = argv[1];
  if (action == "--help" || action == "-h" || action == "help") {
    print_usage(command, stdout);
    return 0;
  }
  for (const Action& a : command.actions) {
    if (action == a.name) return a.run(argc - 1, argv + 1);
  }
  std::fprintf(stderr, "samsa %s: unknown action '%s'\n\n", command.name, argv[1]);
  print_usage(command, stderr);
  return kUsageExitCode;
}

}  // namespace samsa::cli

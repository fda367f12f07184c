#pragma once
// Commands with actions (`samsa topic create`, `samsa group describe`): one
// table per command and one dispatcher, so every command answers --help,
// usage errors and unknown actions the same way.

#include <span>

namespace samsa::cli {

struct Action {
  const char* name;
  const char* summary;
  int (*run)(int argc, char** argv);  // argv[0] is the action's name
};

struct ActionCommand {
  const char* name;         // "topic"
  const char* operands;     // what follows <action> in the usage line, e.g. "[GROUP] "
  const char* description;  // one line, or nullptr
  std::span<const Action> actions;
};

// Runs `samsa <command> <action> args...`; argv[0] is the command's name.
// No action: usage on stderr and the usage exit code; --help: usage on
// stdout, 0; an unknown action: an error naming it, usage, usage exit code.
int run_action_command(const ActionCommand& command, int argc, char** argv);

}  // namespace samsa::cli

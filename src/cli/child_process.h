#pragma once
// Child processes of `samsa dev cluster`: start a command with its output
// appended to a log file, run one to completion capturing its output, and
// describe how one ended.
//
// A started child runs in a process group of its own (so a terminal's
// Ctrl-C reaches only its parent, which stops the children in order), with
// every signal unblocked and at its default, stdin from /dev/null, and
// PR_SET_PDEATHSIG=SIGTERM: if the parent dies without stopping it (kill -9),
// the child is asked to shut down cleanly. The caller reaps what it starts
// (waitpid) and stops it by PID. POSIX fork/exec: the caller must be
// single-threaded (the dev command starts no threads).

#include <sys/types.h>

#include <string>
#include <vector>

#include "base/result.h"

namespace samsa::cli {

// The path of this executable (/proc/self/exe), to start `samsa server`.
Result<std::string> self_executable();

// Starts argv (argv[0] is the path) with stdout and stderr appended to log_path.
Result<pid_t> start_child(const std::vector<std::string>& argv, const std::string& log_path);

struct Finished {
  int status = 0;  // waitpid's status
  std::string output;  // stdout and stderr, interleaved
};
// Runs argv to completion (bounded by timeout_ms, then SIGKILL) and captures its output.
Result<Finished> run_to_completion(const std::vector<std::string>& argv, int timeout_ms);

// "exited with status 1", "was killed by signal 9 (Killed)".
std::string describe_exit(int status);

// The last `lines` lines of a text file ("" if unreadable).
std::string tail_of_file(const std::string& path, int lines);

}  // namespace samsa::cli

#include "cli/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <fstream>
#include <deque>

namespace samsa::cli {
namespace {

// In the child, between fork and exec: only async-signal-safe calls.
[[noreturn]] void exec_child(const std::vector<char*>& argv, int out_fd, pid_t parent) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig : {SIGINT, SIGTERM, SIGCHLD, SIGHUP, SIGPIPE}) signal(sig, SIG_DFL);
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) _exit(127);  // the parent died before prctl
  int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
  dup2(out_fd, STDOUT_FILENO);
  dup2(out_fd, STDERR_FILENO);
  execv(argv[0], argv.data());
  const char msg[] = "samsa dev: exec failed\n";
  (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
  _exit(127);
}

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const std::string& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

Result<pid_t> fork_exec(const std::vector<std::string>& argv, int out_fd) {
  std::vector<char*> args = c_argv(argv);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return errno_error("fork", errno);
  if (pid == 0) exec_child(args, out_fd, parent);
  return pid;
}

int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

}  // namespace

Result<std::string> self_executable() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return errno_error("readlink /proc/self/exe", errno);
  return std::string(buf, size_t(n));
}

Result<pid_t> start_child(const std::vector<std::string>& argv, const std::string& log_path) {
  int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return errno_error("open " + log_path, errno);
  auto pid = fork_exec(argv, fd);
  close(fd);
  return pid;
}

Result<Finished> run_to_completion(const std::vector<std::string>& argv, int timeout_ms) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return errno_error("pipe", errno);
  auto pid = fork_exec(argv, fds[1]);
  close(fds[1]);
  if (!pid.ok()) {
    close(fds[0]);
    return pid.error();
  }
  Finished out;
  int64_t deadline = now_ms() + timeout_ms;
  bool killed = false;
  for (;;) {
    int64_t left = deadline - now_ms();
    if (left <= 0 && !killed) {
      kill(*pid, SIGKILL);
      killed = true;
    }
    pollfd p{fds[0], POLLIN, 0};
    int n = poll(&p, 1, killed ? 1000 : int(left));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 && killed && now_ms() > deadline + 5000) break;  // a grandchild holds the pipe
    if (n <= 0) continue;
    char buf[4096];
    ssize_t got = read(fds[0], buf, sizeof buf);
    if (got > 0) {
      out.output.append(buf, size_t(got));
      continue;
    }
    if (got == 0 || errno != EINTR) break;  // end of output: the child is done with it
  }
  close(fds[0]);
  while (waitpid(*pid, &out.status, 0) < 0 && errno == EINTR) {
  }
  if (killed) return Error(ErrorKind::kTimedOut, argv[0] + " did not finish within " + std::to_string(timeout_ms) + " ms");
  return out;
}

std::string describe_exit(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    return "was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  return "ended with wait status " + std::to_string(status);
}

std::string tail_of_file(const std::string& path, int lines) {
  std::ifstream in(path);
  std::deque<std::string> kept;
  std::string line;
  while (std::getline(in, line)) {
    kept.push_back(line);
    if (int(kept.size()) > lines) kept.pop_front();
  }
  std::string out;
  for (const std::string& l : kept) out += l + "\n";
  return out;
}

}  // namespace samsa::cli

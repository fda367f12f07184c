// samsa-sim: run the deterministic simulator: the Raft cluster (default) or,
// with --broker first, the whole single broker (broker_sim.h); with
// --cluster first, the replicated cluster of brokers (cluster_sim.h).
//   samsa-sim --broker [--mix M] --seed N [--quiet]   (and every mode below;
//                                       M: drawn (default), all, base,
//                                       offsets, churn, group: which clients
//                                       run beside producers and consumers)
//   samsa-sim --seed N [--quiet]        replay one seed; prints its trace
//   samsa-sim --range A B               run seeds A..B-1; exit 1 if any fails
//   samsa-sim --seeds N --minutes M [--start S] [--first] [--jobs J]
//                                       search random seeds (up to N, for at
//                                       most M minutes, J at a time); prints
//                                       failing seeds (--first: stop at the
//                                       first one)
//   samsa-sim --script FILE             run a scenario script (scenario.h)
//   samsa-sim --check-history FILE      judge a recorded JSONL history (the
//                                       chaos suite's; docs/testing.md) with
//                                       LogHistory: prints each violation,
//                                       exit 1 if any, 2 if unreadable
// Each searched seed runs in a forked child, so an ASSERT in the code under
// test is reported as that seed's failure instead of ending the search.
#include <sys/wait.h>
#include <cerrno>
#include <csignal>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "base/log.h"
#include "base/rng.h"
#include "testing/broker_sim.h"
#include "testing/cluster_sim.h"
#include "testing/history_file.h"
#include "testing/scenario.h"
#include "testing/sim_run.h"

namespace {

using samsa::sim::RunOptions;
using samsa::sim::RunResult;

bool g_broker = false;  // --broker: the broker simulation, else the Raft cluster
bool g_cluster = false;  // --cluster: the replicated cluster of brokers (cluster_sim.h)
samsa::sim::BrokerSimMix g_mix;  // --mix
std::string g_replay_flags;      // what a failing seed's replay line needs: "--broker [--mix M] "

// One broker-simulation seed; prints its summary line when `print` or failing.
bool run_broker_seed(uint64_t seed, bool trace, bool print) {
  samsa::sim::BrokerSimOptions o;
  o.seed = seed;
  o.print_trace = trace;
  o.mix = g_mix;
  samsa::sim::BrokerSimResult r = samsa::sim::run_broker_sim(o);
  if (print || !r.ok) std::printf("broker seed %llu: %s\n", (unsigned long long)seed, r.summary().c_str());
  return r.ok;
}

// One cluster-simulation seed; prints its summary line when `print` or failing.
bool run_cluster_seed(uint64_t seed, bool trace, bool print) {
  samsa::sim::ClusterSimOptions o;
  o.seed = seed;
  o.print_trace = trace;
  samsa::sim::ClusterSimResult r = samsa::sim::run_cluster_sim(o);
  if (print || !r.ok) std::printf("cluster seed %llu: %s\n", (unsigned long long)seed, r.summary().c_str());
  for (size_t i = 0; !r.ok && i < r.violations.size() && i < 10; ++i) {
    const auto& v = r.violations[i];
    std::printf("  VIOLATION %s %s: %s\n", samsa::sim::to_string(v.kind), v.partition.c_str(), v.detail.c_str());
  }
  return r.ok;
}

void print_summary(uint64_t seed, const RunResult& r) {
  std::printf("seed %llu: %s | %s | events=%llu ops=%zu ambiguous=%zu crashes=%zu bounces=%zu leaders=%zu commit=%lld recovery=%lldms%s\n",
              (unsigned long long)seed, r.ok ? "ok" : ("FAIL: " + r.failure).c_str(), r.shape.c_str(),
              (unsigned long long)r.events, r.ops_completed, r.ops_ambiguous, r.crashes, r.bounces, r.leaders,
              (long long)r.commit, (long long)r.recovery_ms, r.linearizability_unknown ? " lin=unknown" : "");
}

int replay(uint64_t seed, bool quiet) {
  if (g_broker) return run_broker_seed(seed, !quiet, true) ? 0 : 1;
  if (g_cluster) return run_cluster_seed(seed, !quiet, true) ? 0 : 1;
  RunOptions o;
  o.seed = seed;
  o.trace = !quiet;
  RunResult r = samsa::sim::run_seed(o);
  for (const std::string& line : r.trace) std::printf("%s\n", line.c_str());
  print_summary(seed, r);
  return r.ok ? 0 : 1;
}

// Starts one seed in a child process; the child exits 0 if it passed.
pid_t start_isolated(uint64_t seed) {
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid != 0) return pid;
  alarm(120);  // a seed that hangs (a livelock in the code under test) fails too
  if (g_broker || g_cluster) {
    bool ok = g_cluster ? run_cluster_seed(seed, false, false) : run_broker_seed(seed, false, false);
    std::fflush(stdout);
    _exit(ok ? 0 : 1);
  }
  RunOptions o;
  o.seed = seed;
  RunResult r = samsa::sim::run_seed(o);
  if (!r.ok) print_summary(seed, r);
  std::fflush(stdout);
  _exit(r.ok ? 0 : 1);
}

// True if the child's exit status says its seed passed; else `why` says how it failed.
bool passed(int status, std::string* why) {
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
    *why = "hung for 120s";
  } else if (WIFSIGNALED(status)) {
    *why = "crashed (ASSERT?) with signal " + std::to_string(WTERMSIG(status));
  } else {
    *why = "violation";
  }
  return false;
}

bool run_isolated(uint64_t seed, std::string* why) {
  int status = 0;
  waitpid(start_isolated(seed), &status, 0);
  return passed(status, why);
}

int run_range(uint64_t begin, uint64_t end) {
  int failures = 0;
  for (uint64_t s = begin; s < end; ++s) {
    std::string why;
    if (!run_isolated(s, &why)) {
      std::printf("FAILING SEED %llu (%s): replay with samsa-sim %s--seed %llu\n", (unsigned long long)s, why.c_str(),
                  g_replay_flags.c_str(), (unsigned long long)s);
      ++failures;
    }
  }
  std::printf("%llu passed, %d failed\n", (unsigned long long)(end - begin - uint64_t(failures)), failures);
  return failures == 0 ? 0 : 1;
}

// Searches seeds drawn from Rng(start), `jobs` children at a time (the
// seeds and their verdicts do not depend on `jobs`; only the order of the
// lines printed does).
int search(uint64_t count, double minutes, uint64_t start, bool stop_at_first, int jobs) {
  auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  samsa::Rng rng(start);
  uint64_t started = 0, done = 0, failures = 0;
  std::map<pid_t, uint64_t> running;  // child -> its seed
  bool stopping = false;
  while (true) {
    while (!stopping && started < count && int(running.size()) < jobs && elapsed() <= minutes * 60) {
      uint64_t seed = rng.next_u64() >> 16;
      running[start_isolated(seed)] = seed;
      ++started;
    }
    if (running.empty()) break;
    int status = 0;
    pid_t pid = waitpid(-1, &status, 0);
    auto it = running.find(pid);
    if (it == running.end()) continue;
    uint64_t seed = it->second;
    running.erase(it);
    ++done;
    std::string why;
    if (!passed(status, &why)) {
      ++failures;
      std::printf("FAILING SEED %llu (%s) after %llu seeds, %.1fs: replay with samsa-sim %s--seed %llu\n",
                  (unsigned long long)seed, why.c_str(), (unsigned long long)done, elapsed(),
                  g_replay_flags.c_str(), (unsigned long long)seed);
      std::fflush(stdout);
      if (stop_at_first) stopping = true;
    }
    if (done % 1000 == 0) {
      std::printf("progress: %llu seeds, %llu failing, %.0fs\n", (unsigned long long)done,
                  (unsigned long long)failures, elapsed());
      std::fflush(stdout);
    }
  }
  std::printf("searched %llu seeds in %.1fs: %llu failing\n", (unsigned long long)done, elapsed(),
              (unsigned long long)failures);
  return failures == 0 ? 0 : 1;
}

int check_history_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "samsa-sim: cannot read %s: %s\n", path, std::strerror(errno));
    return 2;
  }
  std::stringstream text;
  text << in.rdbuf();
  auto verdict = samsa::sim::check_history(text.str());
  if (!verdict.ok()) {
    std::fprintf(stderr, "samsa-sim: %s: %s\n", path, verdict.error().message().c_str());
    return 2;
  }
  for (const auto& v : verdict->violations) {
    std::printf("VIOLATION %s %s: %s\n", samsa::sim::to_string(v.kind), v.partition.c_str(), v.detail.c_str());
  }
  std::printf("history %s: %zu events, %zu acknowledged records, %zu violations\n", path, verdict->events,
              verdict->acknowledged_records, verdict->violations.size());
  return verdict->violations.empty() ? 0 : 1;
}

int usage() {
  std::fprintf(stderr,
               "usage: samsa-sim [--cluster | --broker [--mix drawn|all|base|offsets|churn|group]] --seed N [--quiet] | --range A B | --seeds N --minutes M [--start S] [--first] [--jobs J] | --script FILE | --check-history FILE\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "--cluster") {
    g_cluster = true;
    g_replay_flags = "--cluster ";
    samsa::set_log_level(std::getenv("SIM_LOG") ? samsa::LogLevel::kInfo : samsa::LogLevel::kOff);
    --argc;
    ++argv;
  } else if (argc >= 2 && std::string(argv[1]) == "--broker") {
    g_broker = true;
    g_replay_flags = "--broker ";
    // The broker's own log lines would swamp the trace (and cost time in a
    // search); the trace says what happened. SIM_LOG=1 shows them anyway.
    samsa::set_log_level(std::getenv("SIM_LOG") ? samsa::LogLevel::kInfo : samsa::LogLevel::kOff);
    --argc;
    ++argv;
    if (argc >= 3 && std::string(argv[1]) == "--mix") {
      auto mix = samsa::sim::BrokerSimMix::named(argv[2]);
      if (!mix) return usage();
      g_mix = *mix;
      g_replay_flags = "--broker --mix " + std::string(argv[2]) + " ";
      argc -= 2;
      argv += 2;
    }
  }
  if (argc < 2) return usage();
  std::string cmd = argv[1];
  if (cmd == "--seed" && argc >= 3) return replay(std::strtoull(argv[2], nullptr, 10), argc >= 4 && std::string(argv[3]) == "--quiet");
  if (cmd == "--range" && argc == 4) return run_range(std::strtoull(argv[2], nullptr, 10), std::strtoull(argv[3], nullptr, 10));
  if (cmd == "--check-history" && argc == 3) return check_history_file(argv[2]);
  if (cmd == "--script" && argc == 3) return samsa::sim::run_scenario_file(argv[2]) ? 0 : 1;
  if (cmd == "--seeds") {
    uint64_t count = UINT64_MAX;
    double minutes = 1;
    uint64_t start = uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
    bool first = false;
    int jobs = 1;
    for (int i = 1; i < argc; i += 2) {
      std::string k = argv[i];
      if (k == "--first") {
        first = true;
        --i;
        continue;
      }
      if (i + 1 >= argc) return usage();
      if (k == "--seeds") count = std::strtoull(argv[i + 1], nullptr, 10);
      else if (k == "--minutes") minutes = std::strtod(argv[i + 1], nullptr);
      else if (k == "--start") start = std::strtoull(argv[i + 1], nullptr, 10);
      else if (k == "--jobs") jobs = std::max(1, std::atoi(argv[i + 1]));
      else return usage();
    }
    return search(count, minutes, start, first, jobs);
  }
  return usage();
}

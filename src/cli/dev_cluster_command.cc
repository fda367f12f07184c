// `samsa dev cluster`: a local cluster in one command. Writes N combined-node
// configs, or C controller-only and N broker-only ones with --controllers C
// (cli/dev_cluster_config.h), formats every node with one cluster id
// (`samsa storage format`), starts a `samsa server` process per node
// (cli/child_process.h), waits until each broker answers Metadata listing
// all N brokers, prints the bootstrap list, and stops every node it
// started, by PID (the brokers first: their controlled shutdown needs a
// controller), on Ctrl-C or SIGTERM, or as soon as one of them dies (naming
// it).
//
// Signals: SIGINT, SIGTERM, SIGHUP and SIGCHLD are blocked for the whole run
// and taken synchronously (sigtimedwait), so no handler runs concurrently
// and a child's death is never missed (SIGCHLD is blocked before the first
// fork; every wakeup reaps all children with WNOHANG).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli/action_table.h"
#include "cli/arg_parser.h"
#include "cli/child_process.h"
#include "cli/cluster_metadata.h"
#include "cli/commands.h"
#include "cli/dev_cluster_config.h"
#include "cli/kafka_client.h"
#include "cli/wire_client.h"

namespace samsa::cli {
namespace {

constexpr const char* kCommand = "dev cluster";
constexpr int kMaxNodes = 16;
constexpr int kStorageTimeoutMs = 30000;
constexpr int kProbeTimeoutMs = 1000;
constexpr int kLogTailLines = 20;

struct DevArgs {
  int64_t brokers = 3;
  int64_t controllers = 0;  // 0: every node is combined
  int64_t base_port = 0;
  std::string data_dir = "./data/cluster";
  int64_t start_timeout_ms = 60000;
  int64_t stop_timeout_ms = 30000;
  bool configs_only = false;
};

int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

struct RunningNode {
  const DevNode* node;
  pid_t pid = -1;
  bool running = false;
  int status = 0;  // waitpid's, once not running
};

sigset_t watched_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&set, sig);
  return set;
}

// The next watched signal within timeout_ms: its number, or 0 on timeout.
int next_signal(int64_t timeout_ms) {
  sigset_t set = watched_signals();
  timespec ts{time_t(timeout_ms / 1000), long(timeout_ms % 1000) * 1000000L};
  for (;;) {
    int sig = sigtimedwait(&set, nullptr, &ts);
    if (sig >= 0) return sig;
    if (errno == EAGAIN) return 0;
    if (errno != EINTR) return 0;
  }
}

// Reaps every child that has ended; returns the first one found that had
// been running (nullptr if none).
RunningNode* reap(std::vector<RunningNode>& nodes) {
  RunningNode* first = nullptr;
  for (RunningNode& n : nodes) {
    if (!n.running) continue;
    int status = 0;
    pid_t got = waitpid(n.pid, &status, WNOHANG);
    if (got == n.pid) {
      n.running = false;
      n.status = status;
      if (first == nullptr) first = &n;
    }
  }
  return first;
}

using NodeFilter = bool (*)(const DevNode&);
bool every_node(const DevNode&) { return true; }
bool broker_only(const DevNode& n) { return n.role == DevRole::kBroker; }

bool any_running(const std::vector<RunningNode>& nodes, NodeFilter which = every_node) {
  for (const RunningNode& n : nodes) {
    if (n.running && which(*n.node)) return true;
  }
  return false;
}

// SIGTERM to every running node `which` selects, then SIGKILL to those
// still running after timeout_ms. Returns false if one of them did not exit
// with status 0.
bool stop_nodes(std::vector<RunningNode>& nodes, int64_t timeout_ms, NodeFilter which) {
  std::vector<bool> stopping(nodes.size(), false);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!nodes[i].running || !which(*nodes[i].node)) continue;
    stopping[i] = true;
    kill(nodes[i].pid, SIGTERM);
  }
  int64_t deadline = now_ms() + timeout_ms;
  while (any_running(nodes, which)) {
    (void)reap(nodes);
    if (!any_running(nodes, which)) break;
    int64_t left = deadline - now_ms();
    if (left <= 0) break;
    (void)next_signal(std::min<int64_t>(left, 100));  // SIGCHLD, or another Ctrl-C: keep waiting
  }
  bool clean = true;
  for (size_t i = 0; i < nodes.size(); ++i) {
    RunningNode& n = nodes[i];
    if (!stopping[i]) continue;
    if (n.running) {
      std::fprintf(stderr, "samsa %s: node %d (pid %d) did not stop within %lld ms: killing it\n", kCommand,
                   n.node->id, int(n.pid), (long long)timeout_ms);
      kill(n.pid, SIGKILL);
      while (waitpid(n.pid, &n.status, 0) < 0 && errno == EINTR) {
      }
      n.running = false;
      clean = false;
    } else if (!WIFEXITED(n.status) || WEXITSTATUS(n.status) != 0) {
      std::fprintf(stderr, "samsa %s: node %d (pid %d) %s\n", kCommand, n.node->id, int(n.pid),
                   describe_exit(n.status).c_str());
      clean = false;
    }
  }
  return clean;
}

// Broker-only nodes first (their controlled shutdown needs a controller),
// then the others.
bool stop_all(std::vector<RunningNode>& nodes, int64_t timeout_ms) {
  bool brokers = stop_nodes(nodes, timeout_ms, broker_only);
  return stop_nodes(nodes, timeout_ms, every_node) && brokers;
}

void report_death(const RunningNode& n, const char* when) {
  std::fprintf(stderr, "samsa %s: node %d (pid %d) %s %s; its log %s ends:\n%s", kCommand, n.node->id, int(n.pid),
               describe_exit(n.status).c_str(), when, n.node->log_path.c_str(),
               tail_of_file(n.node->log_path, kLogTailLines).c_str());
}

// Free loopback ports, all distinct: every socket stays bound until all are picked.
Result<std::vector<std::pair<uint16_t, uint16_t>>> free_ports(int nodes) {
  std::vector<std::pair<uint16_t, uint16_t>> out;
  std::vector<int> held;
  auto pick = [&held]() -> Result<uint16_t> {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return errno_error("socket", errno);
    held.push_back(fd);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      return errno_error("bind a free loopback port", errno);
    }
    return uint16_t(ntohs(a.sin_port));
  };
  Status status = ok_status();
  for (int k = 0; k < nodes && status.ok(); ++k) {
    auto broker = pick();
    auto controller = broker.ok() ? pick() : broker;
    if (!controller.ok()) {
      status = controller.error();
      break;
    }
    out.emplace_back(*broker, *controller);
  }
  for (int fd : held) ::close(fd);
  if (!status.ok()) return status.error();
  return out;
}

Status write_configs(const DevClusterLayout& layout) {
  std::error_code ec;
  std::filesystem::create_directories(layout.root, ec);
  if (ec) return Error(ErrorKind::kIo, "cannot create " + layout.root + ": " + ec.message());
  for (const DevNode& n : layout.nodes) {
    std::ofstream out(n.config_path, std::ios::trunc);
    out << render_node_config(layout, n);
    if (!out.flush()) return Error(ErrorKind::kIo, "cannot write " + n.config_path);
  }
  return ok_status();
}

// The cluster id a node of an earlier run was formatted with, if any.
std::optional<std::string> existing_cluster_id(const DevClusterLayout& layout) {
  for (const DevNode& n : layout.nodes) {
    std::ifstream in(n.data_dir + "/meta.properties");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("cluster.id=", 0) == 0) return line.substr(11);
    }
  }
  return std::nullopt;
}

Result<std::string> run_storage(const std::string& self, std::vector<std::string> args) {
  args.insert(args.begin(), {self, "storage"});
  ASSIGN_OR_RETURN(Finished done, run_to_completion(args, kStorageTimeoutMs));
  if (!WIFEXITED(done.status) || WEXITSTATUS(done.status) != 0) {
    return Error(ErrorKind::kIo, "samsa storage " + args[2] + " " + describe_exit(done.status) + ":\n" + done.output);
  }
  return done.output;
}

// Formats every node with one cluster id (kept from an earlier run).
Result<std::string> format_nodes(const std::string& self, const DevClusterLayout& layout) {
  std::string cluster_id;
  if (auto existing = existing_cluster_id(layout)) {
    cluster_id = *existing;
  } else {
    ASSIGN_OR_RETURN(std::string made, run_storage(self, {"random-uuid"}));
    while (!made.empty() && (made.back() == '\n' || made.back() == ' ')) made.pop_back();
    cluster_id = made;
  }
  for (const DevNode& n : layout.nodes) {
    ASSIGN_OR_RETURN(std::string ignored,
                     run_storage(self, {"format", "--cluster-id", cluster_id, "--config", n.config_path,
                                        "--ignore-formatted"}));
    (void)ignored;
  }
  return cluster_id;
}

// Ready: the node answers Metadata and lists every node of the layout as a
// live broker, so the cluster is formed (for one node: it has registered).
bool sees_every_node(const DevNode& n, const DevClusterLayout& layout) {
  if (!n.is_broker()) return true;  // a controller has no broker listener: its brokers speak for it
  auto client = WireClient::connect(HostPort{kDevClusterHost, n.broker_port}, kProbeTimeoutMs);
  if (!client.ok()) return false;
  auto metadata = fetch_cluster_metadata(*client);
  if (!metadata.ok()) return false;
  std::set<int32_t> live = live_broker_ids(*metadata);
  for (const DevNode& other : layout.nodes) {
    if (other.is_broker() && live.count(other.id) == 0) return false;
  }
  return true;
}

enum class Waited { kReady, kDied, kInterrupted, kTimedOut };

Waited wait_until_ready(std::vector<RunningNode>& nodes, const DevClusterLayout& layout, int64_t timeout_ms) {
  std::vector<bool> ready(nodes.size(), false);
  int64_t deadline = now_ms() + timeout_ms;
  for (;;) {
    if (RunningNode* dead = reap(nodes)) {
      report_death(*dead, "while starting");
      return Waited::kDied;
    }
    bool all = true;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (!ready[i]) ready[i] = sees_every_node(*nodes[i].node, layout);
      all = all && ready[i];
    }
    if (all) return Waited::kReady;
    int64_t left = deadline - now_ms();
    if (left <= 0) return Waited::kTimedOut;
    int sig = next_signal(std::min<int64_t>(left, 100));
    if (sig != 0 && sig != SIGCHLD) return Waited::kInterrupted;
  }
}

void print_started(const DevClusterLayout& layout, const std::vector<RunningNode>& nodes,
                   const std::string& cluster_id) {
  std::printf("samsa dev cluster: %zu node%s, cluster id %s, data under %s\n", nodes.size(),
              nodes.size() == 1 ? "" : "s", cluster_id.c_str(), layout.root.c_str());
  for (const RunningNode& n : nodes) {
    auto listener = [](const char* name, uint16_t port) {
      return std::string(name) + " " + kDevClusterHost + ":" + std::to_string(port) + ", ";
    };
    std::string listeners = n.node->is_broker() ? listener("broker", n.node->broker_port) : "";
    if (n.node->is_controller()) listeners += listener("controller", n.node->controller_port);
    std::printf("  node %d: pid %d, %sconfig %s, log %s\n", n.node->id, int(n.pid), listeners.c_str(),
                n.node->config_path.c_str(), n.node->log_path.c_str());
  }
  std::printf("Bootstrap servers: %s\n", dev_bootstrap_servers(layout).c_str());
  std::printf("Press Ctrl-C to stop the cluster.\n");
  std::fflush(stdout);
}

// Runs until a stop signal (exit 0 if every node stopped cleanly) or a
// node's death (exit 1).
int supervise(std::vector<RunningNode>& nodes, int64_t stop_timeout_ms) {
  for (;;) {
    int sig = next_signal(1000);
    if (RunningNode* dead = reap(nodes)) {
      report_death(*dead, "unexpectedly");
      std::fprintf(stderr, "samsa %s: stopping the other nodes\n", kCommand);
      stop_all(nodes, stop_timeout_ms);
      return 1;
    }
    if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
      std::fprintf(stderr, "samsa %s: %s: stopping %zu node%s\n", kCommand, strsignal(sig), nodes.size(),
                   nodes.size() == 1 ? "" : "s");
      bool clean = stop_all(nodes, stop_timeout_ms);
      std::fprintf(stderr, "samsa %s: %s\n", kCommand, clean ? "every node stopped" : "stopped, not cleanly");
      return clean ? 0 : 1;
    }
  }
}

int run_cluster(const DevArgs& args) {
  int64_t total = args.brokers + args.controllers;
  if (total > kMaxNodes) {
    return report_failure(kCommand, std::to_string(total) + " nodes: at most " + std::to_string(kMaxNodes));
  }
  std::vector<std::pair<uint16_t, uint16_t>> ports;
  if (args.base_port > 0) {
    if (args.base_port + 2 * total - 1 > 65535) {
      return report_failure(kCommand, "--base-port " + std::to_string(args.base_port) + " leaves no room for " +
                                          std::to_string(total) + " nodes (2 ports each)");
    }
    ports = ports_from_base(int(total), uint16_t(args.base_port));
  } else {
    auto picked = free_ports(int(total));
    if (!picked.ok()) return report_failure(kCommand, picked.error().message());
    ports = std::move(picked).value();
  }
  DevClusterLayout layout = plan_dev_cluster(args.data_dir, ports, int(args.controllers));
  if (Status s = write_configs(layout); !s.ok()) return report_failure(kCommand, s.error().message());
  if (args.configs_only) {
    for (const DevNode& n : layout.nodes) std::printf("%s\n", n.config_path.c_str());
    return 0;
  }
  auto self = self_executable();
  if (!self.ok()) return report_failure(kCommand, self.error().message());

  sigset_t signals = watched_signals();
  sigprocmask(SIG_BLOCK, &signals, nullptr);
  auto cluster_id = format_nodes(*self, layout);
  if (!cluster_id.ok()) return report_failure(kCommand, cluster_id.error().message());

  std::vector<RunningNode> nodes;
  for (const DevNode& n : layout.nodes) {
    auto pid = start_child({*self, "server", "--config", n.config_path}, n.log_path);
    if (!pid.ok()) {
      stop_all(nodes, args.stop_timeout_ms);
      return report_failure(kCommand, "cannot start node " + std::to_string(n.id) + ": " + pid.error().message());
    }
    nodes.push_back({&n, *pid, true, 0});
  }
  switch (wait_until_ready(nodes, layout, args.start_timeout_ms)) {
    case Waited::kReady: break;
    case Waited::kDied:
      std::fprintf(stderr, "samsa %s: stopping the other nodes\n", kCommand);
      stop_all(nodes, args.stop_timeout_ms);
      return 1;
    case Waited::kInterrupted:
      stop_all(nodes, args.stop_timeout_ms);
      return report_failure(kCommand, "interrupted while the nodes were starting; every node stopped");
    case Waited::kTimedOut:
      stop_all(nodes, args.stop_timeout_ms);
      return report_failure(kCommand, "not every broker answered Metadata listing all " +
                                          std::to_string(args.brokers) + " brokers within " +
                                          std::to_string(args.start_timeout_ms) + " ms (see the node logs under " +
                                          layout.root + "); every node stopped");
  }
  print_started(layout, nodes, *cluster_id);
  return supervise(nodes, args.stop_timeout_ms);
}

int dev_cluster(int argc, char** argv) {
  DevArgs args;
  ArgParser parser("samsa dev cluster",
                   "Run a local cluster of N combined nodes (broker and controller) on loopback\n"
                   "ports, or of C controller-only and N broker-only nodes (--controllers C),\n"
                   "until Ctrl-C or SIGTERM: configs, data and logs under --data-dir.");
  parser.add_int("brokers", "N", "Number of brokers (default 3)", &args.brokers, 1, kMaxNodes);
  parser.add_int("controllers", "C",
                 "Controller-only nodes 1..C, the quorum, with N broker-only nodes after them (default 0: "
                 "N combined nodes)",
                 &args.controllers, 0, kMaxNodes - 1);
  parser.add_int("base-port", "PORT",
                 "Node K: broker PORT+2(K-1), controller one above (default: free ports)",
                 &args.base_port, 1, 65535);
  parser.add_string("data-dir", 0, "DIR", "Where configs, data and logs go (default ./data/cluster)",
                    &args.data_dir);
  parser.add_int("start-timeout-ms", "MS", "How long the nodes may take to answer Metadata (default 60000)",
                 &args.start_timeout_ms, 1, 3600 * 1000);
  parser.add_int("stop-timeout-ms", "MS", "How long a node may take to stop before SIGKILL (default 30000)",
                 &args.stop_timeout_ms, 1, 3600 * 1000);
  parser.add_flag("configs-only", 0, "Write the node configs, print their paths and exit", &args.configs_only);
  parser.set_epilog("Example:\n  samsa dev cluster --brokers 3\n  samsa dev cluster --brokers 2 --controllers 3\n"
                    "  kcat -b <the printed bootstrap servers> -L");
  if (auto outcome = parser.parse(argc, argv); outcome != ParseOutcome::kOk) {
    return outcome == ParseOutcome::kHelp ? 0 : kUsageExitCode;
  }
  return run_cluster(args);
}

constexpr Action kActions[] = {
    {"cluster", "Run a local cluster of N nodes until Ctrl-C", dev_cluster},
};

}  // namespace

int run_dev(int argc, char** argv) {
  return run_action_command(ActionCommand{"dev", "", "Development helpers.", kActions}, argc, argv);
}

}  // namespace samsa::cli

#include "testing/scenario.h"

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "testing/sim_cluster.h"

namespace samsa::sim {
namespace {

class ScenarioRunner {
 public:
  bool run_line(const std::vector<std::string>& w, std::string* err);
  std::unique_ptr<SimCluster> cluster;

 private:
  bool setup(const std::vector<std::string>& w, std::string* err);
  bool network(const std::vector<std::string>& w, std::string* err);
  bool expect(const std::vector<std::string>& w, std::string* err);
  bool move_held(const std::vector<std::string>& w, bool deliver);
  SimNode& node(const std::string& s) { return cluster->node(NodeId(std::stoi(s))); }

  ClusterOptions options_;
  size_t trace_mark_ = 0;
  int64_t snapshot_every_ = 1000000;
  uint64_t put_seq_ = 0;
};

bool parse_link(const std::string& s, int* from, int* to) {
  auto arrow = s.find("->");
  if (arrow == std::string::npos) return false;
  *from = std::stoi(s.substr(0, arrow));
  *to = std::stoi(s.substr(arrow + 2));
  return true;
}

bool ScenarioRunner::setup(const std::vector<std::string>& w, std::string* err) {
  if (w[0] == "seed") {
    options_.seed = std::stoull(w.at(1));
  } else if (w[0] == "option") {
    bool on = w.at(2) == "on";
    if (w[1] == "pre_vote") options_.raft.pre_vote = on;
    else if (w[1] == "check_quorum") options_.raft.check_quorum = on;
    else if (w[1] == "batch") options_.raft.max_entries_per_append = std::stoul(w[2]);
    else if (w[1] == "snapshot_every") snapshot_every_ = std::stoll(w[2]);
    else return *err = "unknown option", false;
  } else {  // nodes
    options_.voters = std::stoi(w.at(1));
    if (w.size() >= 4 && w[2] == "observers") options_.observers = std::stoi(w[3]);
    options_.trace = true;
    options_.tick_jitter_ms = 0;
    options_.snapshot_every = snapshot_every_;
    cluster = std::make_unique<SimCluster>(options_);
    cluster->network().set_faults(NetworkFaults{0, 0, 1, 1});
  }
  return true;
}

bool ScenarioRunner::move_held(const std::vector<std::string>& w, bool deliver) {
  int from = 0, to = 0;
  bool filtered = w.size() >= 2 && parse_link(w[1], &from, &to);
  std::vector<Packet> batch, keep;
  for (Packet& p : cluster->held()) {
    bool match = !filtered || (p.from == from && p.to == to);
    (match ? batch : keep).push_back(std::move(p));
  }
  cluster->held() = std::move(keep);
  if (deliver) {
    for (Packet& p : batch) {
      if (!cluster->network().blocked(p.from, p.to)) cluster->deliver(std::move(p));
    }
  }
  return !batch.empty();
}

bool ScenarioRunner::network(const std::vector<std::string>& w, std::string* err) {
  SimNetwork& net = cluster->network();
  const std::string& c = w[0];
  if (c == "partition") {
    std::vector<std::vector<int>> groups(1);
    for (size_t i = 1; i < w.size(); ++i) {
      if (w[i] == "|") groups.emplace_back();
      else groups.back().push_back(std::stoi(w[i]));
    }
    net.heal();
    net.partition(groups);
  } else if (c == "isolate") {
    int n = std::stoi(w.at(1));
    for (const SimNode& s : cluster->nodes()) {
      if (s.id.value() != n) net.block_both(n, s.id.value());
    }
  } else if (c == "block") {
    net.block(std::stoi(w.at(1)), std::stoi(w.at(2)));
  } else if (c == "heal") {
    net.heal();
  } else if (c == "loss") {
    NetworkFaults f = net.faults();
    f.loss = std::stod(w.at(1));
    net.set_faults(f);
  } else {
    return *err = "unknown command " + c, false;
  }
  return true;
}

bool compare(int64_t a, const std::string& op, int64_t b) {
  if (op == "==") return a == b;
  if (op == ">=") return a >= b;
  if (op == "<=") return a <= b;
  if (op == "<") return a < b;
  if (op == ">") return a > b;
  return false;
}

bool ScenarioRunner::expect(const std::vector<std::string>& w, std::string* err) {
  const std::string& what = w.at(1);
  if (what == "trace") {
    std::string text;
    for (size_t i = 2; i < w.size(); ++i) text += (i > 2 ? " " : "") + w[i];
    const auto& lines = cluster->trace_lines();
    for (size_t i = trace_mark_; i < lines.size(); ++i) {
      if (lines[i].find(text) != std::string::npos) {
        trace_mark_ = i + 1;
        return true;
      }
    }
    return *err = "no trace line contains '" + text + "'", false;
  }
  if (what == "leader-among") {
    for (size_t i = 2; i < w.size(); ++i) {
      if (cluster->leader() == NodeId(std::stoi(w[i]))) return true;
    }
    return *err = fmt::format("leader is {}", cluster->leader().value()), false;
  }
  if (what == "no-leader") {
    if (cluster->leader() == kNoNode) return true;
    return *err = fmt::format("node {} is leader", cluster->leader().value()), false;
  }
  SimNode& n = node(w.at(2));
  if (!n.up()) return *err = "node is down", false;
  const raft::RaftNode& r = *n.raft;
  int64_t got = 0, want = 0;
  std::string op = "==";
  if (what == "leader") {
    if (r.role() == raft::Role::kLeader && cluster->leader() == n.id) return true;
    return *err = fmt::format("node {} is {} (cluster leader {})", n.id.value(), raft::to_string(r.role()),
                              cluster->leader().value()),
           false;
  } else if (what == "role") {
    if (w.at(3) == raft::to_string(r.role())) return true;
    return *err = fmt::format("node {} is {}", n.id.value(), raft::to_string(r.role())), false;
  } else if (what == "term") {
    got = r.term().value();
  } else if (what == "last") {
    got = r.log().last_index().value();
  } else if (what == "entry") {
    raft::LogIndex i(std::stoll(w.at(3)));
    auto t = r.log().term_at(i);
    got = t ? t->value() : -1;
    want = std::stoll(w.at(4));
  } else if (what == "commit") {
    got = r.log().commit().value();
  } else if (what == "value") {
    got = n.kv.get(std::stoi(w.at(3)));
  } else {
    return *err = "unknown expectation " + what, false;
  }
  if (what != "entry") {
    // `expect X N V`, `expect X N OP V`, and for value `expect value N KEY [OP] V`.
    size_t at = what == "value" ? 4 : 3;
    if (w.size() > at + 1) op = w[at++];
    want = std::stoll(w.at(at));
  }
  if (compare(got, op, want)) return true;
  return *err = fmt::format("{}: got {}, want {} {}", what, got, op, want), false;
}

bool ScenarioRunner::run_line(const std::vector<std::string>& w, std::string* err) {
  const std::string& c = w[0];
  if (c == "seed" || c == "option" || c == "nodes") return setup(w, err);
  if (!cluster) return *err = "`nodes` must come first", false;
  if (c == "tick") {
    cluster->run_until(cluster->now() + std::stoll(w.at(1)) * options_.tick_ms);
  } else if (c == "hold") {
    // Switching holding off releases nothing: held packets stay until delivered.
    cluster->set_hold_packets(w.at(1) == "on");
  } else if (c == "deliver") {
    move_held(w, true);
  } else if (c == "flush") {
    for (int i = 0; i < 1000 && move_held({"deliver"}, true); ++i) {
    }
  } else if (c == "drop") {
    move_held(w, false);
  } else if (c == "crash") {
    cluster->crash(node(w.at(1)).id);
  } else if (c == "restart") {
    cluster->restart(node(w.at(1)).id);
  } else if (c == "campaign") {
    cluster->campaign(node(w.at(1)).id);
  } else if (c == "put" || c == "put?" || c == "put-leader") {
    bool any = c == "put-leader";
    NodeId target = any ? cluster->leader() : node(w.at(1)).id;
    if (target == kNoNode) return *err = "no leader", false;
    KvCommand cmd{999, ++put_seq_, KvOp::kPut, std::stoi(w.at(any ? 1 : 2)), std::stoll(w.at(any ? 2 : 3))};
    raft::ProposeResult r = cluster->propose(target, cmd.encode());
    if (!r.accepted && c == "put") return *err = "proposal refused (not leader?)", false;
    cluster->trace(fmt::format("put on n{}: {}", target.value(), r.accepted ? fmt::format("index {}", r.index.value()) : "refused"));
  } else if (c == "expect") {
    return expect(w, err);
  } else {
    return network(w, err);
  }
  return true;
}

}  // namespace

ScenarioResult run_scenario(const std::string& script) {
  ScenarioRunner runner;
  ScenarioResult result;
  std::istringstream in(script);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string s; words >> s;) w.push_back(s);
    if (w.empty()) continue;
    if (runner.cluster) runner.cluster->trace("> " + line);
    std::string err;
    bool ok = false;
    try {
      ok = runner.run_line(w, &err);
    } catch (const std::exception& e) {  // std::stoi and .at() on a malformed script
      err = std::string("malformed command: ") + e.what();
    }
    if (ok && runner.cluster && runner.cluster->checker().failed()) {
      err = "invariant violated: " + runner.cluster->checker().failure();
      ok = false;
    }
    if (!ok) {
      result.ok = false;
      result.error = fmt::format("line {}: {}: {}", number, line, err);
      break;
    }
  }
  if (runner.cluster) result.trace = runner.cluster->trace_lines();
  return result;
}

bool run_scenario_file(const char* path) {
  std::ifstream f(path);
  if (!f) {
    std::printf("cannot read %s\n", path);
    return false;
  }
  std::stringstream ss;
  ss << f.rdbuf();
  ScenarioResult r = run_scenario(ss.str());
  for (const std::string& line : r.trace) std::printf("%s\n", line.c_str());
  std::printf("%s: %s\n", path, r.ok ? "PASS" : ("FAIL " + r.error).c_str());
  return r.ok;
}

}  // namespace samsa::sim

#include "testing/scenario.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "testing/script_words.h"
#include "testing/sim_cluster.h"

namespace samsa::sim {
namespace {

class ScenarioRunner {
 public:
  bool run_line(Words& w, std::string* err);
  std::unique_ptr<SimCluster> cluster;

 private:
  bool setup(Words& w, std::string* err);
  bool network(Words& w, std::string* err);
  bool expect(Words& w, std::string* err);
  bool move_held(Words& w, bool deliver);
  // The node named by word i, or null (and w fails) if there is none.
  SimNode* node(Words& w, size_t i) {
    int64_t id = w.num(i);
    if (!w.ok() || id < 1 || size_t(id) > cluster->nodes().size()) {
      w.fail();
      return nullptr;
    }
    return &cluster->node(NodeId(int32_t(id)));
  }

  ClusterOptions options_;
  size_t trace_mark_ = 0;
  int64_t snapshot_every_ = 1000000;
  uint64_t put_seq_ = 0;
};

bool parse_link(const std::string& s, int* from, int* to) {
  auto arrow = s.find("->");
  if (arrow == std::string::npos) return false;
  Words parts({s.substr(0, arrow), s.substr(arrow + 2)});
  *from = int(parts.num(0));
  *to = int(parts.num(1));
  return parts.ok();
}

bool ScenarioRunner::setup(Words& w, std::string* err) {
  if (w.str(0) == "seed") {
    options_.seed = w.num(1);
  } else if (w.str(0) == "option") {
    bool on = w.str(2) == "on";
    if (w.str(1) == "pre_vote") options_.raft.pre_vote = on;
    else if (w.str(1) == "check_quorum") options_.raft.check_quorum = on;
    else if (w.str(1) == "batch") options_.raft.max_entries_per_append = w.num(2);
    else if (w.str(1) == "snapshot_every") snapshot_every_ = w.num(2);
    else return *err = "unknown option", false;
  } else {  // nodes
    options_.voters = w.num(1);
    if (w.size() >= 4 && w.str(2) == "observers") options_.observers = w.num(3);
    options_.trace = true;
    options_.tick_jitter_ms = 0;
    options_.snapshot_every = snapshot_every_;
    cluster = std::make_unique<SimCluster>(options_);
    cluster->network().set_faults(NetworkFaults{0, 0, 1, 1});
  }
  return true;
}

bool ScenarioRunner::move_held(Words& w, bool deliver) {
  int from = 0, to = 0;
  bool filtered = w.size() >= 2 && parse_link(w.str(1), &from, &to);
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

bool ScenarioRunner::network(Words& w, std::string* err) {
  SimNetwork& net = cluster->network();
  const std::string& c = w.str(0);
  if (c == "partition") {
    std::vector<std::vector<int>> groups(1);
    for (size_t i = 1; i < w.size(); ++i) {
      if (w.str(i) == "|") groups.emplace_back();
      else groups.back().push_back(w.num(i));
    }
    net.heal();
    net.partition(groups);
  } else if (c == "isolate") {
    int n = w.num(1);
    for (const SimNode& s : cluster->nodes()) {
      if (s.id.value() != n) net.block_both(n, s.id.value());
    }
  } else if (c == "block") {
    net.block(w.num(1), w.num(2));
  } else if (c == "heal") {
    net.heal();
  } else if (c == "loss") {
    NetworkFaults f = net.faults();
    f.loss = w.real(1);
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

bool ScenarioRunner::expect(Words& w, std::string* err) {
  const std::string& what = w.str(1);
  if (what == "trace") {
    std::string text;
    for (size_t i = 2; i < w.size(); ++i) text += (i > 2 ? " " : "") + w.str(i);
    const auto& lines = cluster->trace_lines();
    for (size_t i = trace_mark_; i < lines.size(); ++i) {
      if (lines[i].find("ms > ") != std::string::npos) continue;  // the script's own lines
      if (lines[i].find(text) != std::string::npos) {
        trace_mark_ = i + 1;
        return true;
      }
    }
    return *err = "no trace line contains '" + text + "'", false;
  }
  if (what == "leader-among") {
    for (size_t i = 2; i < w.size(); ++i) {
      if (cluster->leader() == NodeId(w.num(i))) return true;
    }
    return *err = fmt::format("leader is {}", cluster->leader().value()), false;
  }
  if (what == "no-leader") {
    if (cluster->leader() == kNoNode) return true;
    return *err = fmt::format("node {} is leader", cluster->leader().value()), false;
  }
  SimNode* np = node(w, 2);
  if (!np) return *err = "no such node", false;
  SimNode& n = *np;
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
    if (w.str(3) == raft::to_string(r.role())) return true;
    return *err = fmt::format("node {} is {}", n.id.value(), raft::to_string(r.role())), false;
  } else if (what == "term") {
    got = r.term().value();
  } else if (what == "vote") {
    got = r.vote().value();
  } else if (what == "last") {
    got = r.log().last_index().value();
  } else if (what == "entry") {
    raft::LogIndex i(w.num(3));
    auto t = r.log().term_at(i);
    got = t ? t->value() : -1;
    want = w.num(4);
  } else if (what == "commit") {
    got = r.log().commit().value();
  } else if (what == "value") {
    got = n.kv.get(w.num(3));
  } else {
    return *err = "unknown expectation " + what, false;
  }
  if (what != "entry") {
    // `expect X N V`, `expect X N OP V`, and for value `expect value N KEY [OP] V`.
    size_t at = what == "value" ? 4 : 3;
    if (w.size() > at + 1) op = w.str(at++);
    want = w.num(at);
  }
  if (compare(got, op, want)) return true;
  return *err = fmt::format("{}: got {}, want {} {}", what, got, op, want), false;
}

bool ScenarioRunner::run_line(Words& w, std::string* err) {
  const std::string& c = w.str(0);
  if (c == "seed" || c == "option" || c == "nodes") return setup(w, err);
  if (!cluster) return *err = "`nodes` must come first", false;
  if (c == "tick") {
    cluster->run_until(cluster->now() + w.num(1) * options_.tick_ms);
  } else if (c == "hold") {
    // Switching holding off releases nothing: held packets stay until delivered.
    cluster->set_hold_packets(w.str(1) == "on");
  } else if (c == "deliver") {
    move_held(w, true);
  } else if (c == "flush") {
    Words all({"deliver"});
    for (int i = 0; i < 1000 && move_held(all, true); ++i) {
    }
  } else if (c == "drop") {
    move_held(w, false);
  } else if (c == "crash" || c == "restart" || c == "campaign") {
    SimNode* n = node(w, 1);
    if (!n) return *err = "no such node", false;
    if (c == "crash") cluster->crash(n->id);
    if (c == "restart") cluster->restart(n->id);
    if (c == "campaign") cluster->campaign(n->id);
  } else if (c == "put" || c == "put?" || c == "put-leader") {
    bool any = c == "put-leader";
    SimNode* n = any ? nullptr : node(w, 1);
    if (!any && !n) return *err = "no such node", false;
    NodeId target = any ? cluster->leader() : n->id;
    if (target == kNoNode) return *err = "no leader", false;
    KvCommand cmd{999, ++put_seq_, KvOp::kPut, int32_t(w.num(any ? 1 : 2)), w.num(any ? 2 : 3)};
    if (!w.ok()) return *err = "malformed command", false;
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
    std::vector<std::string> split;
    for (std::string s; words >> s;) split.push_back(s);
    if (split.empty()) continue;
    if (runner.cluster) runner.cluster->trace("> " + line);
    Words w(std::move(split));
    std::string err;
    bool ok = runner.run_line(w, &err);
    if (ok && !w.ok()) {
      ok = false;
      err = "malformed command (missing or non-numeric argument)";
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
    std::printf("cannot read %s: %s\n", path, std::strerror(errno));
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

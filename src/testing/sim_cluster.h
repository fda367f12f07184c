#pragma once
// SimCluster: N Raft nodes (voters and observers) in one thread with a
// simulated clock, network and disks; every random choice comes from one
// seeded Rng, so a seed replays a run exactly.
//
// Time is integer milliseconds. The event queue holds packet deliveries and
// node ticks, ordered by (time, insertion number). After every event the
// InvariantChecker looks at the node it touched. Each node performs every
// Ready as ready.h prescribes (persist + sync, send, apply); with probability
// crash_in_persist a Ready's persistence is cut short by a crash.
//
// Clients are not part of the cluster: they send KvCommands through send()
// and get ClientReplies through the reply handler.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <string>
#include <variant>
#include <vector>

#include "base/rng.h"
#include "raft/config.h"
#include "testing/invariant_checker.h"
#include "testing/kv_machine.h"
#include "testing/sim_network.h"
#include "testing/sim_node.h"

namespace samsa::sim {

inline constexpr int kFirstClientAddress = 1000;

struct ClientReply {
  bool ok = false;
  KvResult result;               // if ok
  uint64_t seq = 0;              // the command this answers
  NodeId leader_hint = kNoNode;  // if !ok
};

struct Packet {
  int from = 0;
  int to = 0;
  std::variant<raft::Message, KvCommand, ClientReply> body;
};

struct ClusterOptions {
  int voters = 3;
  int observers = 0;
  uint64_t seed = 1;
  int64_t tick_ms = 10;
  int64_t tick_jitter_ms = 2;         // clocks drift a little between nodes
  raft::RaftConfig raft;              // timing/limits; ids and seed filled in
  int64_t snapshot_every = 24;        // compact once this many entries are applied
  double crash_in_persist = 0;        // probability a Ready's persistence is cut by a crash
  double bounce_after_ready = 0;      // probability a node crashes and restarts at once
                                      // after performing a Ready (a fast reboot)
  bool hold_packets = false;          // scenarios: sends wait in held() until delivered
  bool trace = false;
};

class SimCluster {
 public:
  explicit SimCluster(ClusterOptions options);
  ~SimCluster();

  int64_t now() const { return now_; }
  uint64_t events() const { return events_; }  // also the history's clock
  Rng& rng() { return rng_; }
  SimNetwork& network() { return network_; }
  InvariantChecker& checker() { return checker_; }
  std::vector<SimNode>& nodes() { return nodes_; }
  SimNode& node(NodeId id);
  const ClusterOptions& options() const { return options_; }

  // Process every event due at or before t; stops early on a violation.
  void run_until(int64_t t);
  void crash(NodeId id);
  void restart(NodeId id);
  size_t up_count() const;
  // A leader whose term is the highest among running leaders (or kNoNode).
  NodeId leader() const;

  void send(Packet p);
  void set_reply_handler(std::function<void(const ClientReply&, int client_address)> h) { on_reply_ = std::move(h); }

  // Scenario control.
  std::vector<Packet>& held() { return held_; }
  void set_hold_packets(bool hold) { options_.hold_packets = hold; }
  void set_crash_in_persist(double p) { options_.crash_in_persist = p; }
  void set_bounce_after_ready(double p) { options_.bounce_after_ready = p; }
  void deliver(Packet p);  // now, bypassing the network
  void campaign(NodeId id);
  raft::ProposeResult propose(NodeId id, Bytes data);

  void trace(const std::string& line);
  const std::vector<std::string>& trace_lines() const { return trace_; }
  size_t crashes() const { return crashes_; }
  size_t bounces() const { return bounces_; }
  size_t packets_sent() const { return packets_sent_; }

 private:
  struct Event {
    int64_t time;
    uint64_t order;
    bool is_tick;
    NodeId node;           // tick target
    uint64_t incarnation;  // tick: stale if the node restarted since
    std::shared_ptr<Packet> packet;  // shared by duplicates; keeps the heap cheap
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.time != b.time ? a.time > b.time : a.order > b.order;
    }
  };

  void start_node(SimNode& n);
  void schedule_tick(SimNode& n);
  void handle(Event& e);
  void handle_packet(Packet& p);
  void handle_client_command(SimNode& n, const KvCommand& cmd, int client);
  void process_ready(SimNode& n);
  bool persist(SimNode& n, const raft::Ready& rd);
  void apply(SimNode& n, const raft::Ready& rd);
  void after_event(SimNode& n);
  void push(Event e);

  ClusterOptions options_;
  Rng rng_;
  SimNetwork network_;
  InvariantChecker checker_;
  std::vector<SimNode> nodes_;
  std::priority_queue<Event, std::vector<Event>, Later> queue_;
  std::vector<Packet> held_;
  int64_t now_ = 0;
  uint64_t order_ = 0;
  uint64_t events_ = 0;
  size_t crashes_ = 0;
  size_t bounces_ = 0;
  size_t packets_sent_ = 0;
  std::function<void(const ClientReply&, int)> on_reply_;
  std::vector<std::string> trace_;
  std::map<NodeId, std::pair<int, int64_t>> seen_role_;  // for tracing role changes
};

}  // namespace samsa::sim

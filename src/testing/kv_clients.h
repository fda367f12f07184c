#pragma once
// KvClients: the simulator's workload driver — a few clients, each with one
// command outstanding, retrying the same command (same seq, so the state
// machine applies it at most once) through leader changes: on a redirect
// they go to the hinted leader, on a timeout to another node. After
// max_attempts they give up; the outcome is then unknown ("ambiguous").
// Every command becomes a KvHistoryOp for the linearizability checker.

#include <cstdint>
#include <vector>

#include "testing/linearizability.h"
#include "testing/sim_cluster.h"

namespace samsa::sim {

struct ClientOptions {
  int clients = 3;
  int keys = 3;
  int64_t request_timeout_ms = 150;
  int max_attempts = 8;
  double get_ratio = 0.5;
};

class KvClients {
 public:
  KvClients(SimCluster& cluster, ClientOptions options);
  // Called every few simulated ms: start commands, retry, give up.
  void step();
  void stop() { stopped_ = true; }
  bool idle() const;

  // Completed commands and ambiguous puts (ambiguous gets are left out).
  std::vector<KvHistoryOp> history() const;
  size_t completed() const { return completed_; }
  size_t ambiguous() const { return ambiguous_; }
  // Commands completed by every client since `events` (the cluster's clock).
  size_t min_completed_since(uint64_t events) const;

 private:
  struct Client {
    uint32_t id = 0;
    uint64_t seq = 0;
    bool busy = false;
    KvCommand cmd;
    int target = 1;
    int attempts = 0;
    int64_t deadline = 0;
    bool resend_now = false;
    size_t op = 0;  // index into history_
    std::vector<uint64_t> completions;  // event numbers
  };
  void start(Client& c);
  void send(Client& c);
  void give_up(Client& c);
  void on_reply(const ClientReply& reply, int address);
  int random_node();

  SimCluster& cluster_;
  ClientOptions options_;
  std::vector<Client> clients_;
  std::vector<KvHistoryOp> history_;
  std::vector<bool> drop_;  // history ops removed (timed-out gets)
  bool stopped_ = false;
  size_t completed_ = 0;
  size_t ambiguous_ = 0;
};

}  // namespace samsa::sim

#pragma once
// The simulated stream network: SimStreamNet (the wires between hosts and
// their faults, one per SimWorld) and SimNodeNetwork (io/network.h, one per
// runtime incarnation of a host).
//
// Streams keep TCP's promise: bytes arrive in order, once, or the connection
// fails (ECONNRESET). Each direction of a connection has the sender's buffer
// (bounded: write() takes what fits, then kWouldBlock, and writability is
// signalled when delivered bytes free room) and chunks in flight, each
// delivered after a latency drawn for it, never before the chunk ahead of it
// (head of line). The receiver's buffer bounds what may be in flight (the
// window): a reader that stops reading stops the sender.
//
// Faults, switchable while running (docs/testing.md, "The simulated runtime"):
// - latency range per direction (LinkFaults; a slow link is a link with a
//   larger range);
// - loss: a chunk lost is retransmitted, RTO doubling, so loss is delay; a
//   chunk lost more than max_retransmits times resets the connection;
// - reset_chance: a chunk resets the connection instead of arriving;
// - cuts: one-way (from -> to) or both ways, partitions of groups, isolating
//   a host. Bytes towards a cut are held (nothing lost) and flow again when
//   healed, or reset the connection after user_timeout_ms; a connect that
//   needs a cut direction (SYN or SYN-ACK) retries its SYN (1 s, 2 s, ...)
//   and so times out unless the cut heals first;
// - refused connects: no listener on the port, the host down, or on command;
// - resets on command: every connection between two hosts, or of one host.
// Duplication and reordering of application messages are not network faults
// on a stream: they come from clients that retry after a reset.
//
// Readiness is level-triggered like epoll (and io/posix_network): a Handler
// is called (as an event of its host, never inside the call that made the
// stream ready) while the stream is readable or writable for the interests
// set, or has failed (hangup, whatever the interests, until closed); end of
// stream is readable. A handler that leaves bytes unread is called again.

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "io/network.h"
#include "testing/sim_world.h"

namespace samsa::sim {

struct SimConnection;
struct SimListenerRecord;

struct LinkFaults {
  int64_t min_latency_us = 50;
  int64_t max_latency_us = 500;
  double loss = 0;            // of a chunk needing a retransmission (each time)
  int64_t rto_ms = 200;       // first retransmission timeout (Linux TCP_RTO_MIN)
  int max_retransmits = 15;   // one more and the connection resets (net.ipv4.tcp_retries2)
  double reset_chance = 0;    // of a chunk resetting the connection instead
};

struct NetOptions {
  int send_buffer_bytes = 64 * 1024;      // when a ListenOptions / connect asks for the default
  int receive_buffer_bytes = 128 * 1024;
  int max_chunk_bytes = 16 * 1024;        // each chunk is 1..this many bytes (drawn)
  int64_t user_timeout_ms = -1;           // held by a cut this long: reset (TCP_USER_TIMEOUT); -1: never
  int64_t syn_retry_ms = 1000;            // first SYN retransmission across a cut; doubles
};

struct NetStats {
  uint64_t connects = 0;
  uint64_t refused = 0;
  uint64_t accepted = 0;
  uint64_t chunks = 0;
  uint64_t bytes = 0;
  uint64_t retransmits = 0;
  uint64_t resets = 0;
};

class SimStreamNet {
 public:
  explicit SimStreamNet(SimWorld& world);
  ~SimStreamNet();
  SimStreamNet(const SimStreamNet&) = delete;
  SimStreamNet& operator=(const SimStreamNet&) = delete;

  // --- knobs and faults (each one is a trace line) ---
  void set_options(const NetOptions& options) { options_ = options; }
  const NetOptions& options() const { return options_; }
  void set_default_faults(const LinkFaults& faults);
  // One direction; overrides the default until clear_link_faults().
  void set_link_faults(HostId from, HostId to, const LinkFaults& faults);
  void clear_link_faults();
  const LinkFaults& faults(HostId from, HostId to) const;

  void cut(HostId from, HostId to);  // one way
  void cut_both(HostId a, HostId b);
  void partition(const std::vector<std::vector<HostId>>& groups);  // cut every pair across groups
  void isolate(HostId host);
  void heal();  // every cut
  void heal(HostId a, HostId b);
  bool is_cut(HostId from, HostId to) const;
  void refuse_connects(HostId host, bool refuse);
  // Resets every connection between a and b (either way) / of host; returns how many.
  size_t reset_between(HostId a, HostId b);
  size_t reset_host(HostId host);

  size_t open_connections() const { return connections_.size(); }
  const NetStats& stats() const { return stats_; }
  SimWorld& world() { return world_; }

  // --- used by SimNodeNetwork and the streams ---
  // A host's incarnation crashed: its streams reset, its listeners gone.
  void host_crashed(HostId host, uint64_t incarnation);
  // An event of `host` if that incarnation still runs; 0 otherwise.
  EventId schedule_on(HostId host, uint64_t incarnation, int64_t delay_ns, std::string what, SimWorld::Task fn);
  int64_t draw_latency_ns(HostId from, HostId to);
  uint16_t ephemeral_port(HostId host);
  bool port_in_use(HostId host, uint16_t port) const;
  void add_listener(const std::shared_ptr<SimListenerRecord>& listener);
  void remove_listener(const SimListenerRecord& listener);
  // The listener a dial of address:port reaches from `from`, if any.
  std::shared_ptr<SimListenerRecord> find_listener(HostId from, HostId target, bool loopback, uint16_t port) const;
  bool refusing(HostId host) const { return refusing_.count(host.value()) != 0; }
  std::shared_ptr<SimConnection> new_connection();
  void forget(uint64_t connection_id) { connections_.erase(connection_id); }
  void pump(SimConnection& c, int from_side);
  void notify(SimConnection& c, int side);
  void reset(SimConnection& c, const std::string& why);
  NetStats& mutable_stats() { return stats_; }

 private:
  void deliver_head(const std::shared_ptr<SimConnection>& c, int from_side);
  void schedule_head(const std::shared_ptr<SimConnection>& c, int from_side, int64_t at_ns);
  void run_ready(const std::shared_ptr<SimConnection>& c, int side);
  void release_held();
  void note(const std::string& what) { world_.note(kWorldHost, "net " + what); }

  SimWorld& world_;
  NetOptions options_;
  LinkFaults default_faults_;
  std::map<std::pair<int, int>, LinkFaults> link_faults_;
  std::set<std::pair<int, int>> cuts_;
  std::set<int> refusing_;
  std::map<std::pair<int, uint16_t>, std::shared_ptr<SimListenerRecord>> listeners_;
  std::map<int, uint16_t> next_port_;
  std::map<uint64_t, std::shared_ptr<SimConnection>> connections_;  // by id: resets run in a fixed order
  uint64_t next_connection_ = 1;
  NetStats stats_;
};

// The Network of one incarnation of a host.
class SimNodeNetwork final : public Network {
 public:
  SimNodeNetwork(SimStreamNet& net, HostId host, uint64_t incarnation)
      : net_(net), host_(host), incarnation_(incarnation) {}
  ~SimNodeNetwork() override;

  Result<std::unique_ptr<Listener>> listen(const ListenOptions& options, AcceptFn on_accept) override;
  ConnectId connect(const std::string& host, uint16_t port, int64_t timeout_ms, ConnectFn done) override;
  void cancel_connect(ConnectId id) override;

  size_t pending_connects() const { return pending_.size(); }

 private:
  struct Pending {
    ConnectFn done;
    EventId timeout = 0;
    std::shared_ptr<SimConnection> connection;  // once the server accepted
    HostId target;
    bool loopback = false;
    uint16_t port = 0;
    std::string what;  // "10.0.0.1:32768>10.0.0.2:9092"
  };
  void send_syn(ConnectId id, int attempt);
  void arrive_syn(ConnectId id, int attempt);
  void establish(ConnectId id, const std::shared_ptr<SimListenerRecord>& listener);
  void finish(ConnectId id, Result<StreamPtr> outcome);
  bool alive() const;

  SimStreamNet& net_;
  HostId host_;
  uint64_t incarnation_;
  std::map<ConnectId, Pending> pending_;
  ConnectId next_connect_ = 1;
};

}  // namespace samsa::sim

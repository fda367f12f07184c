#include "testing/sim_cluster.h"

#include <fmt/format.h>

#include "base/assert.h"

namespace samsa::sim {

SimCluster::SimCluster(ClusterOptions options) : options_(std::move(options)), rng_(options_.seed) {
  int total = options_.voters + options_.observers;
  for (int i = 1; i <= total; ++i) {
    SimNode n;
    n.id = NodeId(i);
    n.voter = i <= options_.voters;
    nodes_.push_back(std::move(n));
  }
  for (SimNode& n : nodes_) start_node(n);
}

SimCluster::~SimCluster() = default;

SimNode& SimCluster::node(NodeId id) {
  ASSERT(id.value() >= 1 && size_t(id.value()) <= nodes_.size());
  return nodes_[size_t(id.value() - 1)];
}

void SimCluster::trace(const std::string& line) {
  if (options_.trace) trace_.push_back(fmt::format("{:>7}ms {}", now_, line));
}

void SimCluster::start_node(SimNode& n) {
  raft::RaftConfig cfg = options_.raft;
  cfg.id = n.id;
  cfg.voters.clear();
  cfg.observers.clear();
  for (const SimNode& m : nodes_) (m.voter ? cfg.voters : cfg.observers).push_back(m.id);
  cfg.seed = rng_.next_u64();
  raft::PersistentState st = n.disk.recover();
  n.kv = KvMachine();
  n.kv_applied = raft::kNoIndex;
  if (st.snapshot) {
    ASSERT(n.kv.restore(st.snapshot->data));
    n.kv_applied = st.snapshot->index;
  }
  n.raft = std::make_unique<raft::RaftNode>(cfg, std::move(st));
  n.pending.clear();
  checker_.on_restart(n.id);
  checker_.on_snapshot_restore(n.id, n.kv_applied, n.kv.hash());
  schedule_tick(n);
  process_ready(n);
}

void SimCluster::schedule_tick(SimNode& n) {
  int64_t jitter = options_.tick_jitter_ms > 0 ? rng_.range(-options_.tick_jitter_ms, options_.tick_jitter_ms) : 0;
  Event e{now_ + options_.tick_ms + jitter, 0, true, n.id, n.incarnation, nullptr};
  push(std::move(e));
}

void SimCluster::push(Event e) {
  e.order = order_++;
  queue_.push(std::move(e));
}

void SimCluster::run_until(int64_t t) {
  while (!queue_.empty() && queue_.top().time <= t && !checker_.failed()) {
    Event e = queue_.top();
    queue_.pop();
    now_ = e.time;
    ++events_;
    handle(e);
  }
  if (!checker_.failed()) now_ = std::max(now_, t);
}

void SimCluster::handle(Event& e) {
  if (!e.is_tick) return handle_packet(*e.packet);
  SimNode& n = node(e.node);
  if (!n.up() || n.incarnation != e.incarnation) return;  // died since
  n.raft->tick();
  schedule_tick(n);
  process_ready(n);
}

void SimCluster::send(Packet p) {
  ++packets_sent_;
  if (options_.hold_packets) {
    held_.push_back(std::move(p));
    return;
  }
  auto shared = std::make_shared<Packet>(std::move(p));
  for (int64_t delay : network_.plan(shared->from, shared->to, rng_)) {
    push(Event{now_ + delay, 0, false, kNoNode, 0, shared});
  }
}

void SimCluster::deliver(Packet p) {
  ++events_;
  handle_packet(p);
}

void SimCluster::handle_packet(Packet& p) {
  if (p.to >= kFirstClientAddress) {
    if (on_reply_) on_reply_(std::get<ClientReply>(p.body), p.to);
    return;
  }
  SimNode& n = node(NodeId(p.to));
  if (!n.up()) return;
  if (auto* m = std::get_if<raft::Message>(&p.body)) {
    trace(fmt::format("recv {}", m->describe()));
    n.raft->step(*m);
  } else {
    handle_client_command(n, std::get<KvCommand>(p.body), p.from);
    return;
  }
  process_ready(n);
}

void SimCluster::handle_client_command(SimNode& n, const KvCommand& cmd, int client) {
  raft::ProposeResult r = n.raft->propose(cmd.encode());
  if (r.accepted) {
    n.pending.insert({cmd.client, cmd.seq});
    trace(fmt::format("n{} propose c{}#{} at {}", n.id.value(), cmd.client, cmd.seq, r.index.value()));
  } else {
    ClientReply reply;
    reply.seq = cmd.seq;
    reply.leader_hint = r.leader_hint;
    send(Packet{n.id.value(), client, reply});
  }
  process_ready(n);
}

void SimCluster::campaign(NodeId id) {
  SimNode& n = node(id);
  if (!n.up()) return;
  n.raft->campaign();
  process_ready(n);
}

raft::ProposeResult SimCluster::propose(NodeId id, Bytes data) {
  SimNode& n = node(id);
  if (!n.up()) return {};
  raft::ProposeResult r = n.raft->propose(std::move(data));
  process_ready(n);
  return r;
}

void SimCluster::process_ready(SimNode& n) {
  while (n.up() && n.raft->has_ready()) {
    raft::Ready rd = n.raft->take_ready();
    if (!persist(n, rd)) return;  // crashed while persisting
    for (raft::Message& m : rd.messages) send(Packet{n.id.value(), m.to.value(), std::move(m)});
    apply(n, rd);
    if (n.kv_applied - n.raft->log().snapshot_index() >= options_.snapshot_every) {
      n.raft->compact(n.kv_applied, n.kv.snapshot());
    }
    if (options_.bounce_after_ready > 0 && rng_.chance(options_.bounce_after_ready)) {
      // Everything it promised is on disk; a reboot now must lose nothing
      // (e.g. a vote granted a moment ago must still bind it).
      after_event(n);
      trace(fmt::format("n{} reboots right after its Ready", n.id.value()));
      ++bounces_;
      crash(n.id);
      restart(n.id);  // checks the restarted node itself
      return;
    }
  }
  after_event(n);
}

bool SimCluster::persist(SimNode& n, const raft::Ready& rd) {
  if (rd.snapshot) n.disk.write(DiskRecord{DiskRecord::Kind::kSnapshot, rd.snapshot, {}, {}});
  if (!rd.entries.empty()) n.disk.write(DiskRecord{DiskRecord::Kind::kEntries, nullptr, rd.entries, {}});
  if (rd.hard_state) n.disk.write(DiskRecord{DiskRecord::Kind::kHardState, nullptr, {}, *rd.hard_state});
  if (n.disk.unsynced() > 0 && options_.crash_in_persist > 0 && rng_.chance(options_.crash_in_persist)) {
    trace(fmt::format("n{} crashes before its fsync", n.id.value()));
    crash(n.id);
    return false;
  }
  n.disk.sync();
  return true;
}

void SimCluster::apply(SimNode& n, const raft::Ready& rd) {
  if (rd.apply_snapshot) {
    ASSERT(n.kv.restore(rd.snapshot->data));
    n.kv_applied = rd.snapshot->index;
    checker_.on_snapshot_restore(n.id, n.kv_applied, n.kv.hash());
    trace(fmt::format("n{} installs snapshot at {}", n.id.value(), n.kv_applied.value()));
  }
  for (const raft::Entry& e : rd.committed) {
    if (e.kind == raft::EntryKind::kNormal) {
      auto cmd = KvCommand::decode(e.data);
      if (cmd) {
        KvResult result = n.kv.apply(*cmd);
        auto it = n.pending.find({cmd->client, cmd->seq});
        if (it != n.pending.end()) {
          n.pending.erase(it);
          ClientReply reply;
          reply.ok = true;
          reply.result = result;
          reply.seq = cmd->seq;
          send(Packet{n.id.value(), kFirstClientAddress + int(cmd->client), reply});
        }
      }
    }
    n.kv_applied = e.index;
    checker_.on_apply(n.id, e, n.kv.hash());
  }
}

void SimCluster::after_event(SimNode& n) {
  if (options_.trace && n.up()) {
    auto& seen = seen_role_[n.id];
    std::pair<int, int64_t> now{int(n.raft->role()), n.raft->term().value()};
    if (seen != now) {
      seen = now;
      trace(fmt::format("n{} is {} in term {}", n.id.value(), raft::to_string(n.raft->role()), now.second));
    }
  }
  checker_.check_node(n, nodes_);
  if (checker_.failed()) trace("VIOLATION: " + checker_.failure());
}

void SimCluster::crash(NodeId id) {
  SimNode& n = node(id);
  if (!n.up()) return;
  n.disk.crash(rng_);
  n.raft.reset();
  n.pending.clear();
  ++n.incarnation;
  ++crashes_;
  trace(fmt::format("n{} CRASH", id.value()));
}

void SimCluster::restart(NodeId id) {
  SimNode& n = node(id);
  if (n.up()) return;
  trace(fmt::format("n{} RESTART", id.value()));
  start_node(n);
  if (n.up()) trace(n.raft->describe());
}

size_t SimCluster::up_count() const {
  size_t c = 0;
  for (const SimNode& n : nodes_) c += n.up() ? 1 : 0;
  return c;
}

NodeId SimCluster::leader() const {
  NodeId best = kNoNode;
  raft::Term best_term;
  for (const SimNode& n : nodes_) {
    if (n.up() && n.raft->role() == raft::Role::kLeader && n.raft->term() >= best_term) {
      best = n.id;
      best_term = n.raft->term();
    }
  }
  return best;
}

}  // namespace samsa::sim

#include "testing/kv_clients.h"

#include <fmt/format.h>

namespace samsa::sim {

KvClients::KvClients(SimCluster& cluster, ClientOptions options) : cluster_(cluster), options_(options) {
  for (int i = 1; i <= options_.clients; ++i) {
    Client c;
    c.id = uint32_t(i);
    c.target = random_node();
    clients_.push_back(c);
  }
  cluster_.set_reply_handler([this](const ClientReply& r, int address) { on_reply(r, address); });
}

int KvClients::random_node() { return int(cluster_.rng().range(1, int64_t(cluster_.nodes().size()))); }

bool KvClients::idle() const {
  for (const Client& c : clients_) {
    if (c.busy) return false;
  }
  return true;
}

void KvClients::step() {
  for (Client& c : clients_) {
    if (!c.busy) {
      if (!stopped_) start(c);
      continue;
    }
    if (c.resend_now || cluster_.now() >= c.deadline) {
      if (c.attempts >= options_.max_attempts) {
        give_up(c);
      } else {
        if (!c.resend_now) c.target = random_node();  // timed out: try elsewhere
        send(c);
      }
    }
  }
}

void KvClients::start(Client& c) {
  c.busy = true;
  c.seq++;
  c.attempts = 0;
  c.cmd = KvCommand{};
  c.cmd.client = c.id;
  c.cmd.seq = c.seq;
  c.cmd.key = int32_t(cluster_.rng().uniform(uint64_t(options_.keys)));
  bool is_put = !cluster_.rng().chance(options_.get_ratio);
  c.cmd.op = is_put ? KvOp::kPut : KvOp::kGet;
  c.cmd.value = is_put ? int64_t(c.id) * 1000000 + int64_t(c.seq) : 0;  // unique per write
  KvHistoryOp op;
  op.client = c.id;
  op.key = c.cmd.key;
  op.is_put = is_put;
  op.value = c.cmd.value;
  op.invoke = cluster_.events();
  c.op = history_.size();
  history_.push_back(op);
  drop_.push_back(false);
  send(c);
}

void KvClients::send(Client& c) {
  c.attempts++;
  c.resend_now = false;
  c.deadline = cluster_.now() + options_.request_timeout_ms;
  cluster_.send(Packet{kFirstClientAddress + int(c.id), c.target, c.cmd});
}

void KvClients::give_up(Client& c) {
  c.busy = false;
  if (c.cmd.op == KvOp::kGet) {
    drop_[c.op] = true;  // a read that never answered says nothing
  }
  ++ambiguous_;
  cluster_.trace(fmt::format("client {} gives up on #{}", c.id, c.seq));
}

void KvClients::on_reply(const ClientReply& reply, int address) {
  Client& c = clients_[size_t(address - kFirstClientAddress - 1)];
  if (!c.busy || reply.seq != c.cmd.seq) return;  // late or duplicate answer
  if (!reply.ok) {
    c.target = reply.leader_hint != kNoNode ? reply.leader_hint.value() : random_node();
    c.resend_now = true;
    if (c.attempts >= options_.max_attempts) give_up(c);
    return;
  }
  KvHistoryOp& op = history_[c.op];
  op.complete = cluster_.events();
  if (!op.is_put) op.value = reply.result.value;
  c.busy = false;
  c.completions.push_back(op.complete);
  ++completed_;
  cluster_.trace(fmt::format("client {} #{} {} key={} value={} ok", c.id, c.seq, op.is_put ? "put" : "get", op.key,
                             op.value));
}

size_t KvClients::min_completed_since(uint64_t events) const {
  size_t best = SIZE_MAX;
  for (const Client& c : clients_) {
    size_t n = 0;
    for (uint64_t t : c.completions) n += t >= events ? 1 : 0;
    best = std::min(best, n);
  }
  return best;
}

}  // namespace samsa::sim

namespace samsa::sim {

std::vector<KvHistoryOp> KvClients::history() const {
  std::vector<KvHistoryOp> out;
  for (size_t i = 0; i < history_.size(); ++i) {
    if (!drop_[i]) out.push_back(history_[i]);
  }
  return out;
}

}  // namespace samsa::sim

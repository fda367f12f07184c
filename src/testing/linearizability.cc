#include "testing/linearizability.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_set>

#include <fmt/format.h>

namespace samsa::sim {
namespace {

// A doubly linked list of call/return events in time order; linearizing an
// op "lifts" its call and return out of the list, backtracking puts them back.
struct Node {
  bool is_call = false;
  size_t op = 0;
  Node* match = nullptr;  // call <-> return (null for a call that never returns)
  Node* prev = nullptr;
  Node* next = nullptr;
};

void unlink(Node* n) {
  n->prev->next = n->next;
  if (n->next) n->next->prev = n->prev;
}
void relink(Node* n) {
  n->prev->next = n;
  if (n->next) n->next->prev = n;
}

struct CacheKey {
  std::vector<uint64_t> bits;
  int64_t state;
  bool operator==(const CacheKey&) const = default;
};
struct CacheHash {
  size_t operator()(const CacheKey& k) const {
    uint64_t h = uint64_t(k.state) * 0x9e3779b97f4a7c15ULL;
    for (uint64_t w : k.bits) h = (h ^ w) * 0x100000001b3ULL;
    return size_t(h);
  }
};

}  // namespace

LinearizableResult check_key_history(const std::vector<KvHistoryOp>& ops, uint64_t max_steps, uint64_t* steps) {
  struct Ev {
    uint64_t time;
    bool is_call;
    size_t op;
  };
  std::vector<Ev> evs;
  for (size_t i = 0; i < ops.size(); ++i) {
    evs.push_back({ops[i].invoke, true, i});
    if (ops[i].complete != KvHistoryOp::kNever) evs.push_back({ops[i].complete, false, i});
  }
  // Returns before calls at equal times cannot happen (times are unique
  // event numbers), but sort stably by (time, call-after-return) anyway.
  std::sort(evs.begin(), evs.end(), [](const Ev& a, const Ev& b) {
    return a.time != b.time ? a.time < b.time : (!a.is_call && b.is_call);
  });
  std::vector<Node> nodes(evs.size() + 1);
  Node* head = &nodes[0];
  std::vector<Node*> call_of(ops.size(), nullptr);
  for (size_t i = 0; i < evs.size(); ++i) {
    Node* n = &nodes[i + 1];
    n->is_call = evs[i].is_call;
    n->op = evs[i].op;
    n->prev = &nodes[i];
    nodes[i].next = n;
    if (n->is_call) {
      call_of[n->op] = n;
    } else {
      call_of[n->op]->match = n;
      n->match = call_of[n->op];
    }
  }

  std::vector<uint64_t> linearized((ops.size() + 63) / 64, 0);
  std::unordered_set<CacheKey, CacheHash> cache;
  struct Frame {
    Node* call;
    int64_t state;
  };
  std::vector<Frame> stack;
  int64_t state = 0;
  Node* entry = head->next;
  while (true) {
    if (++*steps > max_steps) return LinearizableResult::kUnknown;
    if (entry == nullptr) {
      // Only calls that never returned are left; they may all not happen.
      return LinearizableResult::kOk;
    }
    if (entry->is_call) {
      const KvHistoryOp& op = ops[entry->op];
      bool legal = op.is_put || op.value == state;
      if (legal) {
        int64_t next_state = op.is_put ? op.value : state;
        std::vector<uint64_t> bits = linearized;
        bits[entry->op / 64] |= 1ULL << (entry->op % 64);
        if (cache.insert(CacheKey{bits, next_state}).second) {
          stack.push_back({entry, state});
          linearized = std::move(bits);
          state = next_state;
          unlink(entry);
          if (entry->match) unlink(entry->match);
          entry = head->next;
          continue;
        }
      }
      entry = entry->next;
    } else {
      // An op returned before we could linearize it here: backtrack.
      if (stack.empty()) return LinearizableResult::kViolation;
      Frame f = stack.back();
      stack.pop_back();
      state = f.state;
      linearized[f.call->op / 64] &= ~(1ULL << (f.call->op % 64));
      if (f.call->match) relink(f.call->match);
      relink(f.call);
      entry = f.call->next;
    }
  }
}

LinearizabilityReport check_linearizable(const std::vector<KvHistoryOp>& history, uint64_t max_steps_per_key) {
  // An ambiguous put whose value nobody read can always be linearized as
  // "never happened" without touching any other operation, so leave it out:
  // that keeps the search small when many writes time out.
  std::map<int32_t, std::set<int64_t>> read;
  for (const auto& op : history) {
    if (!op.is_put) read[op.key].insert(op.value);
  }
  std::map<int32_t, std::vector<KvHistoryOp>> by_key;
  for (const auto& op : history) {
    bool unobserved = op.is_put && op.complete == KvHistoryOp::kNever && !read[op.key].count(op.value);
    if (!unobserved) by_key[op.key].push_back(op);
  }
  LinearizabilityReport report;
  for (auto& [key, ops] : by_key) {
    uint64_t steps = 0;
    LinearizableResult r = check_key_history(ops, max_steps_per_key, &steps);
    report.steps += steps;
    if (r == LinearizableResult::kViolation) {
      report.result = r;
      report.key = key;
      report.detail = fmt::format("key {}: no linearization of its {} operations", key, ops.size());
      return report;
    }
    if (r == LinearizableResult::kUnknown && report.result == LinearizableResult::kOk) {
      report.result = r;
      report.key = key;
      report.detail = fmt::format("key {}: search budget exhausted", key);
    }
  }
  return report;
}

}  // namespace samsa::sim

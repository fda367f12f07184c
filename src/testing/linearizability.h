#pragma once
// Linearizability checker for the key-value workload: a Wing & Gong search
// with Lowe's memoization (P. Lowe, "Testing for linearizability", 2017),
// run per key (keys are independent, so the history is linearizable iff
// every key's sub-history is).
//
// An operation is [invoke, complete] in a global event order. A put whose
// outcome is unknown (the client gave up) has complete = kNever: it may take
// effect at any point after its invocation, or never. A get whose outcome is
// unknown carries no information and should not be recorded.
// The search is bounded (max_steps); past the bound the answer is kUnknown.

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace samsa::sim {

struct KvHistoryOp {
  static constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();
  uint32_t client = 0;
  int32_t key = 0;
  bool is_put = false;
  int64_t value = 0;  // written, or read (0 = absent)
  uint64_t invoke = 0;
  uint64_t complete = kNever;
};

enum class LinearizableResult { kOk, kViolation, kUnknown };

struct LinearizabilityReport {
  LinearizableResult result = LinearizableResult::kOk;
  int32_t key = 0;      // the first key that failed or ran out of budget
  uint64_t steps = 0;   // search steps used, all keys
  std::string detail;
};

// Check one key's history (all ops must have that key). Initial value is 0.
LinearizableResult check_key_history(const std::vector<KvHistoryOp>& ops, uint64_t max_steps, uint64_t* steps);
// Split by key and check each.
LinearizabilityReport check_linearizable(const std::vector<KvHistoryOp>& history, uint64_t max_steps_per_key);

}  // namespace samsa::sim

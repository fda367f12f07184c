#pragma once
// KvMachine: the simulator's workload — a tiny replicated key-value store
// applied from committed Raft entries. Keys are small ints, values int64
// (0 = absent). Reads go through the log too, so every answer is linearizable
// by construction if Raft is correct; the checker verifies exactly that.
//
// Exactly-once: each client numbers its commands; the machine remembers the
// last (seq, result) per client, so a retried command that commits twice is
// applied once and answered with the first result.

#include <cstdint>
#include <map>
#include <optional>

#include "base/bytes.h"

namespace samsa::sim {

enum class KvOp : uint8_t { kPut = 1, kGet = 2 };

struct KvCommand {
  uint32_t client = 0;
  uint64_t seq = 0;
  KvOp op = KvOp::kGet;
  int32_t key = 0;
  int64_t value = 0;  // kPut only

  Bytes encode() const;
  static std::optional<KvCommand> decode(ByteView data);
};

struct KvResult {
  uint32_t client = 0;
  uint64_t seq = 0;
  int64_t value = 0;  // the value read (kGet) or written (kPut)
};

class KvMachine {
 public:
  // Apply one committed command; returns the answer for its client.
  KvResult apply(const KvCommand& cmd);

  Bytes snapshot() const;
  bool restore(ByteView snapshot);
  uint64_t hash() const;  // of the whole state, to compare replicas
  int64_t get(int32_t key) const;

 private:
  struct Session {
    uint64_t seq = 0;
    int64_t value = 0;
  };
  std::map<int32_t, int64_t> data_;
  std::map<uint32_t, Session> sessions_;
};

}  // namespace samsa::sim

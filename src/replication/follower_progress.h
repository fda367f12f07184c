#pragma once
// FollowerProgress: what a leader knows of one follower of a partition,
// Kafka's Replica / ReplicaState (core/.../cluster/Replica.scala): the
// follower's log end (its last fetch offset), log start, broker epoch, and
// the times that decide whether it is "caught up" (REPLICATION.md A3).
//
// Caught up means: reached the leader's log end within the last
// replica.lag.time.max.ms. A follower trailing a busy producer by a batch
// still counts, because a fetch that reaches what the leader's end was at
// the follower's *previous* fetch credits that previous fetch time.
//
// Pure value; times are milliseconds passed in by the caller.

#include <cstdint>
#include <optional>

#include "model/ids.h"

namespace samsa::replication {

class FollowerProgress {
 public:
  // Replica.updateFetchStateOrThrow (the stale broker epoch check is the
  // caller's). `leader_log_end` is the leader's log end before the read.
  void on_fetch(Offset fetch_offset, Offset log_start, int64_t fetch_time_ms, Offset leader_log_end,
                BrokerEpoch broker_epoch);
  // Replica.resetReplicaState, when this broker becomes leader or gets a new
  // leader epoch: the caught-up clock restarts for ISR members (now) and is
  // cleared for the others (never), so a follower outside the ISR does not hold
  // the HW back. A new leader forgets the follower's offsets: they are
  // unknown until it fetches from us.
  void reset(int64_t now_ms, Offset leader_log_end, bool new_leader, bool in_isr);

  // ReplicaState.isCaughtUp.
  bool is_caught_up(Offset leader_log_end, int64_t now_ms, int64_t max_lag_ms) const;

  std::optional<Offset> log_end() const { return log_end_; }  // nullopt: unknown
  Offset log_start() const { return log_start_; }
  std::optional<BrokerEpoch> broker_epoch() const { return broker_epoch_; }
  // nullopt: never (Kafka's 0 on a wall clock; here time may start at 0).
  std::optional<int64_t> last_caught_up_time_ms() const { return last_caught_up_time_ms_; }
  std::optional<int64_t> last_fetch_time_ms() const { return last_fetch_time_ms_; }
  Offset last_fetch_leader_log_end() const { return last_fetch_leader_log_end_; }

 private:
  std::optional<Offset> log_end_;
  Offset log_start_ = kNoOffset;
  Offset last_fetch_leader_log_end_{0};
  std::optional<int64_t> last_fetch_time_ms_;
  std::optional<int64_t> last_caught_up_time_ms_;
  std::optional<BrokerEpoch> broker_epoch_;
};

}  // namespace samsa::replication

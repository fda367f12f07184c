#pragma once
// RaftObserverDriver: runs one raft::RaftObserver (a metadata-log observer,
// the broker-only node's side) on a Runtime, as RaftDriver runs a RaftNode:
// each ObserverReady performed completely before the next input, in its
// order: 1. persist through RaftStorage with the fsync, INLINE (as
// RaftDriver, for the same reason); 2. send the fetch; 3. apply (the
// snapshot, then the committed entries). A storage failure stops it for
// good. Ticks from a runtime timer every `tick_ms`.
//
// A truncation after a divergence is not written to the storage: the next
// entries (which start right after the kept prefix) replace the stale
// suffix by the storage's entries rule, and a stale suffix still on disk
// after a crash is above the stored commit (the observer only commits what
// matched the leader), so it is never applied: the restarted observer is
// told of the divergence again.
//
// Loop-thread only; the Runtime, storage, fetch transport and state machine
// outlive the driver. receive() must not be called from inside send() or
// the state machine's callbacks (post it to the loop).

#include <cstdint>
#include <memory>
#include <optional>

#include "base/result.h"
#include "controller/raft_driver.h"
#include "io/runtime.h"
#include "raft/observer.h"
#include "raft/raft_storage.h"

namespace samsa {

// Carries an observer's fetches to the voters; the answer comes back
// through RaftObserverDriver::receive, or never (the observer times out).
class RaftFetchTransport {
 public:
  virtual ~RaftFetchTransport() = default;
  virtual void send(const raft::FetchRequest& request) = 0;
};

struct RaftObserverDriverOptions {
  raft::ObserverConfig observer;
  int64_t tick_ms = 50;
};

class RaftObserverDriver {
 public:
  // Loads the storage, restores the state machine from its snapshot, builds
  // the observer; ticks start (the first fetch goes at the first tick).
  static Result<std::unique_ptr<RaftObserverDriver>> start(Runtime& runtime, raft::RaftStorage& storage,
                                                           RaftFetchTransport& transport, RaftStateMachine& machine,
                                                           RaftObserverDriverOptions options);
  ~RaftObserverDriver();
  RaftObserverDriver(const RaftObserverDriver&) = delete;
  RaftObserverDriver& operator=(const RaftObserverDriver&) = delete;

  void receive(const raft::FetchResponse& response);
  // The state machine has applied everything <= index and `data` is its
  // snapshot: the observer forgets its log up to there.
  void compact(raft::LogIndex index, Bytes data);

  const raft::RaftObserver& observer() const { return *observer_; }
  bool failed() const { return failure_.has_value(); }
  const std::optional<Error>& failure() const { return failure_; }

 private:
  RaftObserverDriver(Runtime& runtime, raft::RaftStorage& storage, RaftFetchTransport& transport,
                     RaftStateMachine& machine, int64_t tick_ms);
  void schedule_tick();
  void on_tick();
  void perform_readies();
  void fail(Error error);

  Runtime& runtime_;
  raft::RaftStorage& storage_;
  RaftFetchTransport& transport_;
  RaftStateMachine& machine_;
  int64_t tick_ms_;
  std::unique_ptr<raft::RaftObserver> observer_;
  TimerId tick_timer_ = 0;
  bool in_ready_ = false;
  std::optional<Error> failure_;
};

}  // namespace samsa

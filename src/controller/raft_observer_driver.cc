#include "controller/raft_observer_driver.h"

#include "base/assert.h"
#include "base/log.h"

namespace samsa {

RaftObserverDriver::RaftObserverDriver(Runtime& runtime, raft::RaftStorage& storage, RaftFetchTransport& transport,
                                       RaftStateMachine& machine, int64_t tick_ms)
    : runtime_(runtime), storage_(storage), transport_(transport), machine_(machine), tick_ms_(tick_ms) {}

Result<std::unique_ptr<RaftObserverDriver>> RaftObserverDriver::start(Runtime& runtime, raft::RaftStorage& storage,
                                                                      RaftFetchTransport& transport,
                                                                      RaftStateMachine& machine,
                                                                      RaftObserverDriverOptions options) {
  ASSERT(options.tick_ms > 0);
  ASSIGN_OR_RETURN(raft::PersistentState state, storage.load());
  if (state.snapshot) machine.restore(*state.snapshot);
  std::unique_ptr<RaftObserverDriver> driver(
      new RaftObserverDriver(runtime, storage, transport, machine, options.tick_ms));
  driver->observer_ = std::make_unique<raft::RaftObserver>(options.observer, std::move(state));
  driver->schedule_tick();
  driver->perform_readies();
  return driver;
}

RaftObserverDriver::~RaftObserverDriver() {
  if (tick_timer_ != 0) runtime_.cancel_timer(tick_timer_);
}

void RaftObserverDriver::schedule_tick() {
  tick_timer_ = runtime_.add_timer(tick_ms_, [this] { on_tick(); });
}

void RaftObserverDriver::on_tick() {
  tick_timer_ = 0;
  if (failed()) return;
  observer_->tick();
  perform_readies();
  if (!failed()) schedule_tick();
}

void RaftObserverDriver::receive(const raft::FetchResponse& response) {
  ASSERT_MSG(!in_ready_, "an input to the raft observer while it performs a Ready");
  if (failed()) return;
  observer_->step(response);
  perform_readies();
}

void RaftObserverDriver::compact(raft::LogIndex index, Bytes data) {
  ASSERT_MSG(!in_ready_, "an input to the raft observer while it performs a Ready");
  if (failed()) return;
  observer_->compact(index, std::move(data));
  perform_readies();
}

void RaftObserverDriver::perform_readies() {
  in_ready_ = true;
  while (!failed() && observer_->has_ready()) {
    raft::ObserverReady ready = observer_->take_ready();
    raft::Ready persist;  // 1. persist + fsync (truncate_after: see the header)
    persist.snapshot = ready.snapshot;
    persist.entries = std::move(ready.entries);
    persist.hard_state = ready.hard_state;
    // A fetch alone changes nothing on disk: no fsync for it (one per tick
    // while caught up otherwise).
    bool to_disk = persist.snapshot || !persist.entries.empty() || persist.hard_state;
    Status persisted = to_disk ? raft::persist_ready(storage_, persist) : ok_status();
    if (!persisted.ok()) {
      fail(persisted.error());
      break;
    }
    if (ready.fetch) transport_.send(*ready.fetch);                // 2. send
    if (ready.apply_snapshot) machine_.restore(*ready.snapshot);   // 3. apply
    for (const raft::Entry& e : ready.committed) machine_.apply(e);
  }
  in_ready_ = false;
}

void RaftObserverDriver::fail(Error error) {
  LOG_ERROR("raft", "observer {} stops: its raft state could not be persisted: {}", observer_->id().value(),
            error.to_string());
  failure_ = std::move(error);
  if (tick_timer_ != 0) runtime_.cancel_timer(tick_timer_);
  tick_timer_ = 0;
}

}  // namespace samsa

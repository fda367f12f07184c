#include "controller/raft_driver.h"

#include "base/assert.h"
#include "base/log.h"

namespace samsa {

RaftDriver::RaftDriver(Runtime& runtime, raft::RaftStorage& storage, RaftTransport& transport,
                       RaftStateMachine& machine, int64_t tick_ms)
    : runtime_(runtime), storage_(storage), transport_(transport), machine_(machine), tick_ms_(tick_ms) {}

Result<std::unique_ptr<RaftDriver>> RaftDriver::start(Runtime& runtime, raft::RaftStorage& storage,
                                                      RaftTransport& transport, RaftStateMachine& machine,
                                                      RaftDriverOptions options) {
  ASSERT(options.tick_ms > 0);
  ASSIGN_OR_RETURN(raft::PersistentState state, storage.load());
  if (state.snapshot) machine.restore(*state.snapshot);
  options.raft.seed = runtime.seed() ^ uint64_t(options.raft.id.value());
  std::unique_ptr<RaftDriver> driver(new RaftDriver(runtime, storage, transport, machine, options.tick_ms));
  driver->node_ = std::make_unique<raft::RaftNode>(options.raft, std::move(state));
  driver->schedule_tick();
  driver->perform_readies();
  return driver;
}

RaftDriver::~RaftDriver() {
  if (tick_timer_ != 0) runtime_.cancel_timer(tick_timer_);
}

void RaftDriver::schedule_tick() {
  tick_timer_ = runtime_.add_timer(tick_ms_, [this] { on_tick(); });
}

void RaftDriver::on_tick() {
  tick_timer_ = 0;
  if (failed()) return;
  node_->tick();
  perform_readies();
  if (!failed()) schedule_tick();
}

void RaftDriver::receive(const raft::Message& message) {
  ASSERT_MSG(!in_ready_, "an input to the raft node while it performs a Ready");
  if (failed()) return;
  node_->step(message);
  note_activity(message);
  perform_readies();
}

void RaftDriver::note_activity(const raft::Message& message) {
  if (node_->role() != raft::Role::kLeader) return;
  if (activity_term_ != node_->term()) {
    activity_.clear();
    activity_term_ = node_->term();
  }
  bool answer = message.type == raft::MessageType::kAppendResponse ||
                message.type == raft::MessageType::kHeartbeatResponse;
  if (!answer || message.term != node_->term()) return;
  auto progress = node_->progress().find(message.from);
  if (progress == node_->progress().end()) return;
  int64_t now = runtime_.clock().wall_ms();
  PeerActivity& a = activity_[message.from];
  a.last_fetch_ms = now;
  if (progress->second.match() >= node_->log().last_index()) a.last_caught_up_ms = now;
}

RaftDriver::PeerActivity RaftDriver::activity(NodeId member) const {
  if (node_->role() != raft::Role::kLeader || activity_term_ != node_->term()) return {};
  auto it = activity_.find(member);
  return it == activity_.end() ? PeerActivity{} : it->second;
}

raft::ProposeResult RaftDriver::propose(Bytes data) {
  ASSERT_MSG(!in_ready_, "an input to the raft node while it performs a Ready");
  if (failed()) return raft::ProposeResult{};
  raft::ProposeResult result = node_->propose(std::move(data));
  perform_readies();
  return result;
}

void RaftDriver::campaign() {
  ASSERT_MSG(!in_ready_, "an input to the raft node while it performs a Ready");
  if (failed()) return;
  node_->campaign();
  perform_readies();
}

void RaftDriver::resign() {
  ASSERT_MSG(!in_ready_, "an input to the raft node while it performs a Ready");
  if (failed()) return;
  node_->resign();
  perform_readies();
}

void RaftDriver::compact(raft::LogIndex index, Bytes data) {
  ASSERT_MSG(!in_ready_, "an input to the raft node while it performs a Ready");
  if (failed()) return;
  node_->compact(index, std::move(data));
  perform_readies();
}

void RaftDriver::perform_readies() {
  in_ready_ = true;
  while (!failed() && node_->has_ready()) {
    raft::Ready ready = node_->take_ready();
    ++readies_;
    Status persisted = raft::persist_ready(storage_, ready);  // 1. persist + fsync
    if (!persisted.ok()) {
      fail(persisted.error());
      break;
    }
    for (const raft::Message& m : ready.messages) transport_.send(m);  // 2. send
    if (ready.apply_snapshot) machine_.restore(*ready.snapshot);       // 3. apply
    for (const raft::Entry& e : ready.committed) machine_.apply(e);
  }
  in_ready_ = false;
  machine_.after_readies(*node_);
}

void RaftDriver::fail(Error error) {
  LOG_ERROR("raft", "node {} stops: its raft state could not be persisted: {}", node_->id().value(),
            error.to_string());
  failure_ = std::move(error);
  if (tick_timer_ != 0) runtime_.cancel_timer(tick_timer_);
  tick_timer_ = 0;
}

}  // namespace samsa

#include "controller/raft_metadata_log.h"

#include <string>
#include <utility>

#include "base/assert.h"
#include "base/log.h"
#include "controller/metadata_codec.h"

namespace samsa {

Result<std::unique_ptr<RaftMetadataLog>> RaftMetadataLog::open(Runtime& runtime, const std::filesystem::path& dir,
                                                               RaftTransport& transport,
                                                               RaftMetadataLogOptions options) {
  ASSERT(options.snapshot_every_entries > 0);
  std::unique_ptr<RaftMetadataLog> log(new RaftMetadataLog(runtime, options));
  ASSIGN_OR_RETURN(log->storage_, RaftLogStorage::open(runtime.files(), dir, runtime.clock()));
  ASSIGN_OR_RETURN(log->driver_, RaftDriver::start(runtime, *log->storage_, transport, *log, options.driver));
  LOG_INFO("metadata", "node {}: metadata quorum log open at index {}: {} topics, {} brokers",
           options.driver.raft.id.value(), log->applied_.value(), log->image().topics().size(),
           log->image().brokers().size());
  return log;
}

RaftMetadataLog::~RaftMetadataLog() { *alive_ = false; }

void RaftMetadataLog::receive(const raft::Message& message) { driver_->receive(message); }

bool RaftMetadataLog::active() const {
  if (!driver_ || driver_->failed()) return false;
  const raft::RaftNode& node = driver_->node();
  return node.role() == raft::Role::kLeader && ready_term_ == node.term();
}

void RaftMetadataLog::propose(uint64_t tag, std::vector<MetadataRecord> records, ProposeDone done) {
  ASSERT(!records.empty());
  if (!active()) {
    done(not_controller("this node is not the active controller"));
    return;
  }
  Result<Bytes> batch = encode_metadata_batch(records, runtime_.clock().wall_ms());
  if (!batch.ok()) {
    done(batch.error());
    return;
  }
  const raft::RaftNode& node = driver_->node();
  raft::LogIndex index = node.log().last_index() + 1;
  pending_[index] = Pending{node.term(), tag, std::move(done)};
  raft::ProposeResult proposed = driver_->propose(std::move(*batch));
  if (!proposed.accepted) {
    auto it = pending_.find(index);
    if (it == pending_.end()) return;  // completed meanwhile (the driver failed)
    ProposeDone refused = std::move(it->second.done);
    pending_.erase(it);
    refused(not_controller("the quorum leader refused the proposal"));
    return;
  }
  ASSERT_MSG(proposed.index == index, "a proposal appended at an unexpected index");
}

void RaftMetadataLog::restore(const raft::Snapshot& snapshot) {
  Result<std::vector<MetadataRecord>> records = decode_metadata_batch(snapshot.data);
  // The snapshot's bytes passed a CRC when read; records that do not decode
  // are a bug, and the image cannot go on without them.
  ASSERT_MSG(records.ok(), "a metadata snapshot whose records do not decode");
  for (auto it = pending_.begin(); it != pending_.end() && it->first <= snapshot.index;) {
    finish_later(std::move(it->second.done), not_controller("replaced by a snapshot from the leader"));
    it = pending_.erase(it);
  }
  applied_ = snapshot.index;
  publish_snapshot(Offset(snapshot.index.value()), *records);
}

void RaftMetadataLog::apply(const raft::Entry& entry) {
  applied_ = entry.index;
  auto mine = pending_.find(entry.index);
  std::optional<Pending> pending;
  if (mine != pending_.end()) {
    pending = std::move(mine->second);
    pending_.erase(mine);
  }
  bool proposed_here = pending && pending->term == entry.term;
  if (pending && !proposed_here) {
    finish_later(std::move(pending->done), not_controller("leadership moved before the proposal committed"));
  }
  if (entry.kind == raft::EntryKind::kLeaderChange) {
    if (driver_ && driver_->node().role() == raft::Role::kLeader && entry.term == driver_->node().term()) {
      ready_term_ = entry.term;
    }
    return;
  }
  if (entry.data.empty()) return;
  Result<std::vector<MetadataRecord>> records = decode_metadata_batch(entry.data);
  ASSERT_MSG(records.ok(), "a committed metadata entry whose records do not decode");
  publish(Offset(entry.index.value()), *records, proposed_here ? pending->tag : 0);
  if (proposed_here) finish_later(std::move(pending->done), Offset(entry.index.value()));
}

void RaftMetadataLog::after_readies(const raft::RaftNode& node) {
  if (driver_ && driver_->failed()) {
    fail_pending(*driver_->failure());
    return;
  }
  if (!pending_.empty() && (node.role() != raft::Role::kLeader || node.term() != pending_.begin()->second.term)) {
    fail_pending(not_controller("this node stopped leading the quorum"));
  }
  if (resigned_ && node.leader() != kNoNode && node.leader() != node.id()) {
    finish_resignation("node " + std::to_string(node.leader().value()) + " leads epoch " +
                       std::to_string(node.term().value()));
  }
  if (!compaction_posted_ && applied_ - node.log().snapshot_index() >= options_.snapshot_every_entries) {
    compaction_posted_ = true;
    runtime_.post([this, alive = alive_] {
      if (*alive) compact_now();
    });
  }
}

void RaftMetadataLog::compact_now() {
  compaction_posted_ = false;
  if (!driver_ || driver_->failed() || applied_ <= driver_->node().log().snapshot_index()) return;
  std::optional<Bytes> data = encode_image_snapshot(runtime_.clock().wall_ms());
  if (!data) return;
  ++snapshots_taken_;
  driver_->compact(applied_, std::move(*data));
}

void RaftMetadataLog::fail_pending(const Error& error) {
  for (auto& [index, p] : pending_) finish_later(std::move(p.done), error);
  pending_.clear();
}

void RaftMetadataLog::finish_later(ProposeDone done, Result<Offset> result) {
  runtime_.post([done = std::move(done), result = std::move(result), alive = alive_]() mutable {
    if (*alive) done(std::move(result));
  });
}

void RaftMetadataLog::resign(int64_t bound_ms, std::function<void()> done) {
  ASSERT_MSG(!resigned_, "resign() while a resignation is in progress");
  resigned_ = std::move(done);
  if (!driver_ || driver_->failed() || driver_->node().role() != raft::Role::kLeader) {
    return finish_resignation("");  // nothing to hand on
  }
  LOG_INFO("metadata", "resigning the leadership of the metadata quorum in epoch {}",
           driver_->node().term().value());
  resign_timer_ = runtime_.add_timer(bound_ms, [this, alive = alive_] {
    if (!*alive) return;
    resign_timer_ = 0;
    finish_resignation("no other node leads yet; shutting down anyway");
  });
  driver_->resign();  // its Readies end in after_readies, which sees the successor
}

void RaftMetadataLog::finish_resignation(const std::string& how) {
  if (!resigned_) return;
  if (!how.empty()) LOG_INFO("metadata", "resigned the metadata quorum: {}", how);
  if (resign_timer_) runtime_.cancel_timer(resign_timer_);
  resign_timer_ = 0;
  runtime_.post([done = std::exchange(resigned_, nullptr), alive = alive_] {
    if (*alive) done();
  });
}

Status RaftMetadataLog::shutdown() {
  fail_pending(not_controller("the metadata log is closing"));
  return storage_->close();
}

}  // namespace samsa

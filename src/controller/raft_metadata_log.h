#pragma once
// RaftMetadataLog: the metadata log committed by a Raft quorum of
// controllers (KIP-595/631) — a RaftDriver over RaftLogStorage in the
// metadata log dir, messages through a RaftTransport (the controller
// listener's Kafka framing: controller/raft_network_transport.*; in tests the
// simulator's).
//
// - An entry carries one encoded metadata record batch (metadata_codec.h,
//   the local log's batch format); committed entries are decoded and
//   published in index order. The offset of a published batch is its entry's
//   Raft index.
// - active(): this node leads the quorum and has applied its own term's
//   LeaderChange entry, so its image holds everything committed before it
//   became leader (Kafka's controller also waits for that before it acts).
// - A proposal completes when its entry commits at the index and term it
//   was appended at; with NOT_CONTROLLER when another entry commits there,
//   or when this node stops leading (or its term changes) first, or when it
//   is not the active controller at propose(); with the storage error if
//   the driver stops on a failed write. Completions are posted to the loop
//   (never called from inside the driver's Ready), so a callback may propose.
// - Snapshots (KIP-630): every `snapshot_every_entries` applied entries the
//   image is written as the records that rebuild it (MetadataImage::
//   to_records, one batch) and the log before it is dropped
//   (RaftDriver::compact); a node that restarts or is sent a snapshot
//   rebuilds its image from one, then listeners get on_snapshot().
//
// Loop-thread only; the Runtime and transport must outlive it.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "controller/metadata_log.h"
#include "controller/raft_driver.h"
#include "controller/raft_log_storage.h"
#include "io/runtime.h"

namespace samsa {

struct RaftMetadataLogOptions {
  RaftDriverOptions driver;  // driver.raft: this node's id, the voters, observers
  int64_t snapshot_every_entries = 1000;
};

class RaftMetadataLog final : public MetadataLog, private RaftStateMachine {
 public:
  // Opens the Raft state in `dir` (`<metadata.log.dir>/__cluster_metadata-0`)
  // on the runtime's files, restores the image from the latest snapshot,
  // applies the committed entries after it and starts the node.
  static Result<std::unique_ptr<RaftMetadataLog>> open(Runtime& runtime, const std::filesystem::path& dir,
                                                       RaftTransport& transport, RaftMetadataLogOptions options);
  ~RaftMetadataLog() override;

  // A message from another member (the transport's inbound side).
  void receive(const raft::Message& message);

  bool active() const override;
  void propose(uint64_t tag, std::vector<MetadataRecord> records, ProposeDone done) override;
  Status shutdown() override;
  // Posts `done`, also when this node does not lead (then at once).
  void resign(int64_t bound_ms, std::function<void()> done) override;

  const RaftDriver& driver() const { return *driver_; }
  RaftDriver& driver() { return *driver_; }
  uint64_t snapshots_taken() const { return snapshots_taken_; }

 private:
  struct Pending {
    raft::Term term;
    uint64_t tag = 0;
    ProposeDone done;
  };

  RaftMetadataLog(Runtime& runtime, RaftMetadataLogOptions options) : runtime_(runtime), options_(options) {}

  // RaftStateMachine
  void restore(const raft::Snapshot& snapshot) override;
  void apply(const raft::Entry& entry) override;
  void after_readies(const raft::RaftNode& node) override;

  void finish_later(ProposeDone done, Result<Offset> result);
  void fail_pending(const Error& error);
  void compact_now();
  void finish_resignation(const std::string& how);

  Runtime& runtime_;
  RaftMetadataLogOptions options_;
  std::unique_ptr<RaftLogStorage> storage_;
  std::unique_ptr<RaftDriver> driver_;
  std::map<raft::LogIndex, Pending> pending_;  // proposed here, not committed yet
  raft::Term ready_term_;        // the term whose LeaderChange entry this node applied as leader
  raft::LogIndex applied_;       // last entry applied (or restored)
  bool compaction_posted_ = false;
  uint64_t snapshots_taken_ = 0;
  std::function<void()> resigned_;  // resign()'s done, until another node leads
  TimerId resign_timer_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // for posted work
};

}  // namespace samsa

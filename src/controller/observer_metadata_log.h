#pragma once
// ObserverMetadataLog: the metadata log of a broker-only node
// (process.roles=broker): a RaftObserverDriver over RaftLogStorage in the
// metadata log dir, pulling from the quorum through a RaftFetchTransport
// (RaftFetchClient on a node). Committed entries are decoded and published
// in index order, as RaftMetadataLog does (same entry and snapshot format,
// so the dir is the same as a voter's); every `snapshot_every_entries`
// applied entries the image is written as a snapshot and the log before it
// dropped. It never proposes: active() is false and propose() answers
// NOT_CONTROLLER (a broker forwards to the active controller).
//
// Loop-thread only; the Runtime and transport must outlive it.

#include <cstdint>
#include <filesystem>
#include <memory>

#include "controller/metadata_log.h"
#include "controller/raft_log_storage.h"
#include "controller/raft_observer_driver.h"
#include "io/runtime.h"

namespace samsa {

struct ObserverMetadataLogOptions {
  RaftObserverDriverOptions driver;
  int64_t snapshot_every_entries = 1000;
};

class ObserverMetadataLog final : public MetadataLog, private RaftStateMachine {
 public:
  static Result<std::unique_ptr<ObserverMetadataLog>> open(Runtime& runtime, const std::filesystem::path& dir,
                                                           RaftFetchTransport& transport,
                                                           ObserverMetadataLogOptions options);
  ~ObserverMetadataLog() override;

  // An answer to one of its fetches (the transport's inbound side).
  void receive(const raft::FetchResponse& response);

  bool active() const override { return false; }
  void propose(uint64_t tag, std::vector<MetadataRecord> records, ProposeDone done) override;
  Status shutdown() override;

  const RaftObserverDriver& driver() const { return *driver_; }
  uint64_t snapshots_taken() const { return snapshots_taken_; }

 private:
  ObserverMetadataLog(Runtime& runtime, ObserverMetadataLogOptions options) : runtime_(runtime), options_(options) {}

  // RaftStateMachine
  void restore(const raft::Snapshot& snapshot) override;
  void apply(const raft::Entry& entry) override;

  void compact_now();

  Runtime& runtime_;
  ObserverMetadataLogOptions options_;
  std::unique_ptr<RaftLogStorage> storage_;
  std::unique_ptr<RaftObserverDriver> driver_;
  raft::LogIndex applied_;
  raft::LogIndex snapshot_index_;
  bool compaction_posted_ = false;
  uint64_t snapshots_taken_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace samsa

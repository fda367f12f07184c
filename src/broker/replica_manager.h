#pragma once
// ReplicaManager: the partitions this broker holds, kept in step with the
// metadata image. After every metadata change (and at startup), apply_image()
// deletes the logs of partitions no longer assigned here by topic id
// (deleted topics, and directories a crash during a deletion left behind:
// LogManager::remove_stray_logs), then creates the logs of partitions
// assigned here and updates leader/epoch/ISR.
//
// Loop-thread only.

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "broker/produce_purgatory.h"
#include "controller/metadata_image.h"
#include "replication/alter_partition_channel.h"
#include "replication/partition.h"
#include "replication/replica_fetcher.h"
#include "storage/log_manager.h"

namespace samsa {

// The LogConfig of a topic, from its config overrides and the broker's
// defaults (see topic_configs.h).
using TopicLogConfig = std::function<LogConfig(const TopicState&)>;

class ReplicaManager {
 public:
  ReplicaManager(LogManager& logs, NodeId self, TopicLogConfig log_config)
      : logs_(logs), self_(self), log_config_(std::move(log_config)),
        produce_purgatory_([this](const TopicPartition& tp) { return get(tp); }) {}
  ~ReplicaManager();

  // A partition whose log cannot be created now (out of descriptors, a
  // failing disk) is left out and listed in unopened(): the metadata change
  // stands, and a later call (the broker retries on its housekeeping tick)
  // opens it. The error returned is only that of deleting a log.
  Status apply_image(const MetadataImage& image);
  // The same for a metadata delta that only created or changed the topics
  // named (new topics, new partitions, topic configs): only their partitions
  // are visited. Removals and broker-wide changes take apply_image().
  void apply_topics(const MetadataImage& image, const std::set<std::string>& names);

  // nullptr if this broker holds no replica of tp (or its log is unopened).
  Partition* get(const TopicPartition& tp);

  // Runs on every partition's high-watermark change (the broker posts a
  // wake-up of its delayed fetches).
  void set_high_watermark_listener(std::function<void(const TopicPartition&)> listener);
  // Starts follower fetching (replica_fetcher.h); before that, and after
  // stop_fetchers(), become_follower() refuses.
  void start_fetchers(const ReplicaFetcherConfig& config, Runtime& runtime, std::function<BrokerEpoch()> broker_epoch);
  void stop_fetchers() { fetchers_.reset(); }
  // The control input until the controller drives leadership through the
  // metadata log: follow `leader` in `epoch` (no older than the current
  // one; the partition is made a follower of it if it is not yet), or lead
  // in `epoch` (its fetcher stops). kNotFound: no such partition here.
  Status become_follower(const TopicPartition& tp, const LeaderEndpoint& leader, LeaderEpoch epoch);
  Status become_leader(const TopicPartition& tp, LeaderEpoch epoch);
  const ReplicaFetcherManager* fetchers() const { return fetchers_.get(); }

  // The leader side of the ISR (issue 15): AlterPartition proposals go out
  // through `sender` (alter_partition_channel.h) stamped with this broker's
  // epoch, one in flight per partition, retried after kAlterPartitionRetryMs
  // when the controller could not take them; the isr-expiration check runs
  // every replica.lag.time.max.ms / 2 (`replica_lag_time_max_ms`, also how
  // long an ISR follower may lag: call it before the partitions open).
  static constexpr int64_t kAlterPartitionRetryMs = 100;
  void start_isr_management(Runtime& runtime, int64_t replica_lag_time_max_ms, AlterPartitionSender sender,
                            std::function<BrokerEpoch()> broker_epoch);
  // At shutdown, before the controller goes: no more checks, proposals or
  // retries (answers still on their way are ignored).
  void stop_isr_management();
  // The brokers' epochs and states changed (registration, fencing,
  // controlled shutdown): every partition learns them.
  void apply_brokers(const MetadataImage& image);
  // acks=-1 produces waiting for their partitions' HW.
  ProducePurgatory& produce_purgatory() { return produce_purgatory_; }
  // The isr-expiration check of every partition, now (tests; the timer's work).
  void check_isr_expiration();
  LogManager& logs() { return logs_; }
  const std::set<TopicPartition>& unopened() const { return unopened_; }

 private:
  void open_partitions(const MetadataImage& image, const std::vector<const TopicState*>& topics);
  void send_alter_partition(Partition& partition, const replication::AlterPartitionProposal& proposal);
  void schedule_isr_expiration();
  void retry_alter_partition(const TopicPartition& tp, const Uuid& topic_id, uint64_t proposal_id);

  LogManager& logs_;
  NodeId self_;
  TopicLogConfig log_config_;
  std::map<TopicPartition, std::unique_ptr<Partition>> partitions_;
  // The partitions hold its waits' callbacks (never called once it is gone).
  ProducePurgatory produce_purgatory_;
  std::set<TopicPartition> unopened_;  // assigned here, log not created yet
  std::function<void(const TopicPartition&)> on_high_watermark_;
  std::unique_ptr<ReplicaFetcherManager> fetchers_;  // after partitions_: goes first
  Runtime* runtime_ = nullptr;  // set by start_isr_management
  int64_t replica_lag_time_max_ms_ = 30000;
  AlterPartitionSender alter_partition_sender_;
  std::function<BrokerEpoch()> broker_epoch_;
  TimerId isr_expiration_timer_ = 0;
  std::set<TimerId> retry_timers_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // for late AlterPartition answers
};

}  // namespace samsa

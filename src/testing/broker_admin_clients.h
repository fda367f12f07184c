#pragma once
// The broker simulation's admin-side clients (broker_clients.h has the
// producers and consumers), speaking the real protocol through the codec:
//
// - SimOffsetLister: ListOffsets earliest or latest (drawn) for every
//   partition of a topic; LogHistory judges each answer (earliest is 0,
//   latest is a high watermark at or above what was known when it left).
// - SimTopicChurn: one topic's life, over and over: CreateTopics, a
//   ListOffsets that must find it empty, produces (acks 0, 1, -1), a read
//   back to the high watermark, DeleteTopics, a fetch and a ListOffsets that
//   must answer UNKNOWN_TOPIC_OR_PARTITION, then CreateTopics again under
//   the same name. Each incarnation is a partition history of its own in
//   LogHistory ("churn-0@N"), so nothing of a deleted incarnation may be
//   read from the next; TopicHistory judges existence across crashes.
//
// One request in flight each (PeriodicClient); a request whose answer is
// lost is repeated or settled by the next step (a create answered
// TOPIC_ALREADY_EXISTS is deleted first).

#include <cstdint>
#include <optional>
#include <string>

#include "testing/broker_clients.h"

namespace samsa::sim {

class SimOffsetLister final : public PeriodicClient {
 public:
  SimOffsetLister(ClientEnv env, std::string topic, int32_t partitions, uint64_t seed);
  void start(int64_t interval_ms) { PeriodicClient::start(interval_ms, rng_.range(0, interval_ms)); }
  size_t answers() const { return answers_; }

 private:
  void send_one() override;

  std::string topic_;
  int32_t partitions_;
  Rng rng_;
  size_t answers_ = 0;
};

class SimTopicChurn final : public PeriodicClient {
 public:
  SimTopicChurn(ClientEnv env, std::string topic, uint64_t seed);
  void start(int64_t interval_ms) { PeriodicClient::start(interval_ms, rng_.range(0, interval_ms)); }

  // The incarnation whose records a crash may have touched (to be read back
  // with the other partitions), if any: created, or being deleted.
  struct Live {
    std::string key;  // LogHistory's "topic-0@N"
    bool may_be_gone;  // a DeleteTopics was sent
  };
  std::optional<Live> live() const;
  const std::string& topic() const { return topic_; }
  int incarnations() const { return incarnation_; }

 private:
  enum class Phase { kCreate, kListFresh, kProduce, kReadBack, kDelete, kProbeDeleted };
  void send_one() override;
  void create();
  void list_fresh();
  void produce();
  void read_back();
  void remove();
  void probe_deleted();
  // Reports an answer's error code to TopicHistory; true if it was 0.
  bool answered(int16_t error_code, const std::string& what);
  std::string key() const { return partition_key(topic_, 0) + "@" + std::to_string(incarnation_); }

  std::string topic_;
  Rng rng_;
  Phase phase_ = Phase::kCreate;
  int incarnation_ = 0;
  int produces_left_ = 0;
  int64_t read_position_ = 0;
  bool probe_with_fetch_ = false;
  uint64_t next_seq_ = 0;
};

}  // namespace samsa::sim

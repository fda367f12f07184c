#pragma once
// SimGroupMember: one member of a classic consumer group, speaking the real
// protocol through the codec: FindCoordinator, JoinGroup (with the
// MEMBER_ID_REQUIRED round of KIP-394), SyncGroup (the leader assigns the
// topic's partitions round-robin, in the consumer protocol's bytes),
// OffsetFetch of its partitions on every assignment (where a consumer
// resumes), then Heartbeat, OffsetCommit and OffsetFetch until a rebalance
// or an error sends it back to join or find the coordinator. Now and then
// it rejoins of its own accord, or leaves the group (LeaveGroup) for 1-3 s,
// so that the others take over its partitions and commit them.
//
// It consumes nothing: the offsets it commits move forward from where the
// last OffsetFetch left them by a drawn step, each with a unique metadata
// string, so that GroupHistory can tell which commit an OffsetFetch
// returned. One request in flight (PeriodicClient).

#include <cstdint>
#include <string>
#include <vector>

#include "testing/broker_clients.h"

namespace samsa::sim {

class SimGroupMember final : public PeriodicClient {
 public:
  SimGroupMember(ClientEnv env, int id, std::string group, std::string topic, int32_t partitions, uint64_t seed);
  void start(int64_t interval_ms) { PeriodicClient::start(interval_ms, rng_.range(0, interval_ms)); }
  size_t commits_acknowledged() const { return commits_acknowledged_; }
  int generations() const { return generations_; }

 private:
  enum class Phase { kFindCoordinator, kJoin, kSync, kResume, kStable, kAway };
  void send_one() override;
  void find_coordinator();
  void join();
  void sync();
  void fetch_offsets(bool resuming);
  void heartbeat();
  void commit();
  void leave();
  // Where an error code sends the member; false if it was 0.
  bool handle_error(int16_t code);
  std::string key(int32_t partition) const { return group_ + "/" + partition_key(topic_, partition); }

  int id_;
  std::string group_;
  std::string topic_;
  int32_t partitions_;
  Rng rng_;
  Phase phase_ = Phase::kFindCoordinator;
  std::string member_id_;
  int32_t generation_ = -1;
  std::vector<std::string> members_;      // the leader's view at the last join, else empty
  std::vector<int32_t> assigned_;         // partitions of topic_ this member owns
  std::vector<int64_t> position_;         // per partition: the next offset to commit from
  int64_t next_heartbeat_ms_ = 0;
  int64_t back_at_ms_ = 0;  // kAway: when to join again
  uint64_t next_commit_seq_ = 0;
  size_t commits_acknowledged_ = 0;
  int generations_ = 0;
};

}  // namespace samsa::sim
